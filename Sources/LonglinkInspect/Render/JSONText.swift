import Glibc

/// A JSON value for the inspector's JSON lines (written by hand: keys keep their order, no Foundation).
public enum JSONValue: Hashable, Sendable {
    /// A string.
    case string(String)
    /// A signed number.
    case int(Int64)
    /// An unsigned number.
    case uint(UInt64)
    /// true or false.
    case bool(Bool)
    /// An array.
    case array([JSONValue])
    /// An object whose members keep this order.
    case object([(String, JSONValue)])
    /// null.
    case null

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool { lhs.text == rhs.text }
    public func hash(into hasher: inout Hasher) { hasher.combine(text) }

    /// Compact JSON text.
    public var text: String {
        switch self {
        case .string(let s): JSONText.quote(s)
        case .int(let v): String(v)
        case .uint(let v): String(v)
        case .bool(let v): v ? "true" : "false"
        case .array(let values): "[" + values.map(\.text).joined(separator: ",") + "]"
        case .object(let members): JSONText.object(members)
        case .null: "null"
        }
    }
}

/// JSON and time text helpers.
public enum JSONText {
    /// A JSON string literal.
    public static func quote(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    out += "\\u00" + RawWire.paddedHex(UInt64(scalar.value), digits: 2)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    /// A JSON object with members in the given order.
    public static func object(_ members: [(String, JSONValue)]) -> String {
        "{" + members.map { quote($0.0) + ":" + $0.1.text }.joined(separator: ",") + "}"
    }

    /// ISO 8601 UTC with milliseconds: `2024-11-29T17:06:40.000Z`.
    public static func isoTime(millis: UInt64) -> String {
        var seconds = time_t(clamping: millis / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return "\(pad(Int(parts.tm_year) + 1900, 4))-\(pad(Int(parts.tm_mon) + 1, 2))-\(pad(Int(parts.tm_mday), 2))T"
            + "\(pad(Int(parts.tm_hour), 2)):\(pad(Int(parts.tm_min), 2)):\(pad(Int(parts.tm_sec), 2))"
            + ".\(pad(Int(millis % 1000), 3))Z"
    }

    /// ISO 8601 UTC with milliseconds, from microseconds since the epoch (capture timestamps).
    public static func isoTime(micros: UInt64) -> String { isoTime(millis: micros / 1000) }

    static func pad(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }
}
