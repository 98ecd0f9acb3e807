import Glibc
import LonglinkCore
public import LonglinkJSON

/// JSON and time text helpers for the inspector's output (values are `LonglinkJSON.JSONValue`).
public enum JSONText {
    /// A JSON string literal.
    public static func quote(_ text: String) -> String {
        var out = ""
        JSONValue.quote(text, into: &out)
        return out
    }

    /// A JSON object with members in the given order.
    public static func object(_ members: [(String, JSONValue)]) -> String { JSONValue.object(members).serialized }

    /// ISO 8601 UTC with milliseconds: `2024-11-29T17:06:40.000Z`.
    public static func isoTime(millis: UInt64) -> String { TimestampText.iso8601(millis: millis) }

    /// ISO 8601 UTC with milliseconds, from microseconds since the epoch (capture timestamps).
    public static func isoTime(micros: UInt64) -> String { isoTime(millis: micros / 1000) }

    static func pad(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }
}
