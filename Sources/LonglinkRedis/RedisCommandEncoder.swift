/// Encodes commands as RESP arrays of bulk strings (`*N\r\n$len\r\narg\r\n...`), the only request form Redis needs.
///
/// hiredis's `redisFormatCommandArgv` does the same, but calling it from Swift means building a `const char **`
/// and a length array per command; the format is four lines, so it is written here, appending to one reusable
/// byte array on the hot path (a publisher pipelining thousands of `PUBLISH`es per second).
public enum RedisCommandEncoder {
    /// Appends one command to `buffer`.
    public static func append(_ arguments: [[UInt8]], to buffer: inout [UInt8]) {
        appendHeader(arguments.count, marker: UInt8(ascii: "*"), to: &buffer)
        for argument in arguments {
            appendBulk(argument, to: &buffer)
        }
    }

    /// Appends one command given as text arguments.
    public static func append(_ arguments: [String], to buffer: inout [UInt8]) {
        appendHeader(arguments.count, marker: UInt8(ascii: "*"), to: &buffer)
        for argument in arguments {
            appendBulk(Array(argument.utf8), to: &buffer)
        }
    }

    /// Appends `PUBLISH channel message` without building an argument array.
    public static func appendPublish(channel: [UInt8], message: [UInt8], to buffer: inout [UInt8]) {
        appendHeader(3, marker: UInt8(ascii: "*"), to: &buffer)
        appendBulk(publishName, to: &buffer)
        appendBulk(channel, to: &buffer)
        appendBulk(message, to: &buffer)
    }

    private static let publishName = Array("PUBLISH".utf8)

    private static func appendBulk(_ bytes: [UInt8], to buffer: inout [UInt8]) {
        appendHeader(bytes.count, marker: UInt8(ascii: "$"), to: &buffer)
        buffer.append(contentsOf: bytes)
        buffer.append(13)
        buffer.append(10)
    }

    private static func appendHeader(_ count: Int, marker: UInt8, to buffer: inout [UInt8]) {
        buffer.append(marker)
        appendDecimal(count, to: &buffer)
        buffer.append(13)
        buffer.append(10)
    }

    private static func appendDecimal(_ value: Int, to buffer: inout [UInt8]) {
        // Decimal text of a length fits a small (inline, heap-free) String.
        buffer.append(contentsOf: String(value).utf8)
    }
}
