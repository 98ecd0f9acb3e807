/// One Redis reply (RESP2) as the load generator needs it, read in place from the receive buffer: the bytes it
/// points at are valid only while the buffer is (during the delegate call).
enum RedisReplyView {
    /// `:N`: an integer (PUBLISH answers how many subscribers got the message).
    case integer(Int64)
    /// `+…`: a status line.
    case status(UnsafeRawBufferPointer)
    /// `-…`: an error line.
    case error(UnsafeRawBufferPointer)
    /// `$N`: a bulk string (nil: the null bulk string).
    case bulk(UnsafeRawBufferPointer?)
    /// `*3` of two bulk strings and a bulk string or an integer: a pub/sub push, e.g. `message CHANNEL PAYLOAD` or
    /// `subscribe CHANNEL COUNT`. `payload` is nil when the third element is an integer (`count` then holds it).
    case push(kind: UnsafeRawBufferPointer, channel: UnsafeRawBufferPointer, payload: UnsafeRawBufferPointer?, count: Int64)
    /// Any other array (skipped whole).
    case otherArray
}

/// Splits received bytes into Redis replies in place, as `PushView` does for Longlink pushes: hiredis's reader
/// copies every byte into its own buffer and allocates four objects per pub/sub message, which made the load
/// generator, not the server, the bottleneck of the Redis side of a comparison.
enum RedisReplyScanner {
    /// The reply starting at `offset`: the reply and the offset after it; nil while it is incomplete.
    /// Throws on bytes that are not RESP2.
    static func next(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws(BenchError) -> (RedisReplyView, Int)? {
        guard offset < bytes.count else { return nil }
        let type = bytes[offset]
        guard let (line, afterLine) = Self.line(bytes, from: offset + 1) else { return nil }
        switch type {
        case UInt8(ascii: ":"):
            return (.integer(try integer(line)), afterLine)
        case UInt8(ascii: "+"):
            return (.status(line), afterLine)
        case UInt8(ascii: "-"):
            return (.error(line), afterLine)
        case UInt8(ascii: "$"):
            guard let (value, end) = try bulk(bytes, length: integer(line), at: afterLine) else { return nil }
            return (.bulk(value), end)
        case UInt8(ascii: "*"):
            let count = try integer(line)
            if count == 3, let push = try pushTriple(bytes, at: afterLine) { return push }
            var position = afterLine
            for _ in 0..<max(0, count) {
                guard let (_, end) = try next(bytes, at: position) else { return nil }
                position = end
            }
            return (.otherArray, position)
        default:
            throw BenchError("redis: unexpected reply type byte \(type)")
        }
    }

    /// `*3` of bulk, bulk, bulk-or-integer: the pub/sub shape; nil when incomplete or of another shape (the caller
    /// then skips it as an array).
    private static func pushTriple(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws(BenchError) -> (RedisReplyView, Int)? {
        guard let (first, afterFirst) = try next(bytes, at: offset), case .bulk(let kind?) = first,
            let (second, afterSecond) = try next(bytes, at: afterFirst), case .bulk(let channel?) = second,
            let (third, end) = try next(bytes, at: afterSecond)
        else { return nil }
        switch third {
        case .bulk(let payload?): return (.push(kind: kind, channel: channel, payload: payload, count: 0), end)
        case .integer(let count): return (.push(kind: kind, channel: channel, payload: nil, count: count), end)
        default: return (.otherArray, end)
        }
    }

    /// A bulk string's bytes after its `$N` line; nil while incomplete.
    private static func bulk(_ bytes: UnsafeRawBufferPointer, length: Int64, at offset: Int) throws(BenchError) -> (UnsafeRawBufferPointer?, Int)? {
        if length < 0 { return (nil, offset) }
        let count = Int(length)
        guard bytes.count - offset >= count + 2 else { return nil }
        guard bytes[offset + count] == 13, bytes[offset + count + 1] == 10 else { throw BenchError("redis: bulk string without CRLF") }
        return (UnsafeRawBufferPointer(start: bytes.baseAddress! + offset, count: count), offset + count + 2)
    }

    /// The line from `offset` up to CRLF, and the offset after the CRLF; nil while incomplete.
    private static func line(_ bytes: UnsafeRawBufferPointer, from offset: Int) -> (UnsafeRawBufferPointer, Int)? {
        var index = offset
        while index + 1 < bytes.count {
            if bytes[index] == 13 && bytes[index + 1] == 10 {
                return (UnsafeRawBufferPointer(start: bytes.baseAddress! + offset, count: index - offset), index + 2)
            }
            index += 1
        }
        return nil
    }

    private static func integer(_ line: UnsafeRawBufferPointer) throws(BenchError) -> Int64 {
        var value: Int64 = 0
        var negative = false
        for (position, byte) in line.enumerated() {
            if position == 0 && byte == UInt8(ascii: "-") {
                negative = true
                continue
            }
            guard byte >= 48 && byte <= 57, value < Int64.max / 10 else { throw BenchError("redis: bad integer in a reply") }
            value = value * 10 + Int64(byte - 48)
        }
        return negative ? -value : value
    }
}
