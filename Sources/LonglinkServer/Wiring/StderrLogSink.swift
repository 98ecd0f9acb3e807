import Foundation
public import LonglinkCore
import LonglinkJSON

/// Writes log records to stderr: readable text on a terminal, JSON lines otherwise (for log shippers).
public struct StderrLogSink: LogSink {
    /// Output format.
    public enum Format: Sendable { case text, json }

    let format: Format

    public init(format: Format? = nil) {
        self.format = format ?? (isatty(2) == 1 ? .text : .json)
    }

    public func write(_ record: LogRecord) {
        let time = Self.timestamp()
        var line: String
        switch format {
        case .text:
            line = "\(time) \(record.level) \(record.label): \(record.message)"
            for (key, value) in record.metadata { line += " \(key)=\(value)" }
        case .json:
            line = "{\"time\":\"\(time)\",\"level\":\"\(record.level)\",\"logger\":\(Self.quote(record.label)),\"msg\":\(Self.quote(record.message))"
            for (key, value) in record.metadata { line += ",\(Self.quote(key)):\(Self.quote(value))" }
            line += "}"
        }
        line += "\n"
        var bytes = Array(line.utf8)
        bytes.withUnsafeMutableBytes { _ = Glibc.write(2, $0.baseAddress, $0.count) }
    }

    private static func timestamp() -> String {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        var t = time_t(ts.tv_sec)
        var parts = tm()
        gmtime_r(&t, &parts)
        let millis = ts.tv_nsec / 1_000_000
        func pad(_ v: Int32, _ width: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(millis), 3))Z"
    }

    /// `text` as a JSON string literal for a log or output line (`JSONValue.quote`, without the HTML escapes).
    public static func quote(_ text: String) -> String {
        JSONValue.quoted(text, htmlSafe: false)
    }
}
