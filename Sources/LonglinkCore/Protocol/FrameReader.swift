/// Splits a byte stream into frames: each frame is its body's length as a base-128 varint (at most 10 bytes)
/// followed by the body. Shared by every `FrameCodec`; it knows lengths, not bodies.
///
/// The reader is stateless: feed it the connection's inbound `ByteBuffer` after each read. It either takes one
/// complete frame from the front of the buffer, or returns nil and consumes nothing while the frame is
/// incomplete. A bad prefix is reported as soon as its bytes are there, before any body is waited for or
/// allocated: a prefix above `maxFrameSize` is `.oversized`, one longer than 10 bytes or above 2^64 − 1 is
/// `.varintOverflow`, and a zero length is `.empty`.
public struct FrameReader: Sendable, Hashable {
    /// The default largest body accepted: 64 KiB.
    public static let defaultMaxFrameSize = 64 * 1024

    /// The largest frame body (without its prefix) accepted, in bytes.
    public var maxFrameSize: Int

    /// Creates a reader accepting bodies of at most `maxFrameSize` bytes.
    public init(maxFrameSize: Int = FrameReader.defaultMaxFrameSize) {
        precondition(maxFrameSize > 0, "maxFrameSize must be positive")
        self.maxFrameSize = maxFrameSize
    }

    /// A parsed length prefix.
    struct Prefix {
        /// The body length.
        var length: Int
        /// The number of prefix bytes.
        var size: Int
    }

    /// Gives `body` the next complete frame body from the front of `buffer` and returns its result, or returns
    /// nil and consumes nothing when the frame is not complete yet.
    ///
    /// The frame (prefix and body) is consumed once its bytes are there, whether or not `body` throws: the
    /// framing was sound, so a caller that tolerates a bad frame can go on with the next one. Prefix errors
    /// consume nothing (the stream cannot be resynchronised; close the connection).
    public func nextFrame<R>(
        in buffer: inout ByteBuffer,
        _ body: (UnsafeRawBufferPointer) throws(FrameError) -> R
    ) throws(FrameError) -> R? {
        // One pass over the readable bytes, prefix and body together, and no `Result`: the frame's length is
        // noted before `body` runs, so it is consumed whether `body` returns or throws.
        let maxFrameSize = self.maxFrameSize
        var consumed = 0
        let frame: R?
        do throws(FrameError) {
            frame = try buffer.withReadableBytes { (bytes) throws(FrameError) -> R? in
                guard let prefix = try Self.parsePrefix(bytes, maxFrameSize: maxFrameSize),
                    bytes.count - prefix.size >= prefix.length
                else { return nil }
                consumed = prefix.size + prefix.length
                return try body(UnsafeRawBufferPointer(rebasing: bytes[prefix.size..<consumed]))
            }
        } catch {
            if consumed > 0 { buffer.moveReaderIndex(forwardBy: consumed) }
            throw error
        }
        if consumed > 0 { buffer.moveReaderIndex(forwardBy: consumed) }
        return frame
    }

    /// Parses the length prefix at the front of `bytes`; nil when more bytes are needed to finish it.
    static func parsePrefix(_ bytes: UnsafeRawBufferPointer, maxFrameSize: Int) throws(FrameError) -> Prefix? {
        var value: UInt64 = 0
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            let bits = UInt64(byte & 0x7F)
            if index == 9 {
                // The tenth byte carries bit 63 only, and must end the varint.
                guard byte & 0x80 == 0, bits <= 1 else { throw .varintOverflow }
            }
            value |= bits << UInt64(7 * index)
            index += 1
            if byte & 0x80 == 0 {
                guard value != 0 else { throw .empty }
                guard value <= UInt64(maxFrameSize) else { throw .oversized(length: value, limit: maxFrameSize) }
                return Prefix(length: Int(value), size: index)
            }
        }
        return nil
    }
}

extension FrameCodec {
    /// Decodes the next complete client→server frame from the front of `buffer`, consuming it; nil (consuming
    /// nothing) when the frame is not complete yet.
    public func decodeNextClientFrame(
        from buffer: inout ByteBuffer,
        reader: FrameReader = FrameReader()
    ) throws(FrameError) -> ClientFrame? {
        try reader.nextFrame(in: &buffer) { (body) throws(FrameError) in try decodeClientFrame(body: body) }
    }

    /// Decodes the next complete server→client frame from the front of `buffer`, consuming it; nil (consuming
    /// nothing) when the frame is not complete yet.
    public func decodeNextServerFrame(
        from buffer: inout ByteBuffer,
        reader: FrameReader = FrameReader()
    ) throws(FrameError) -> ServerFrame? {
        try reader.nextFrame(in: &buffer) { (body) throws(FrameError) in try decodeServerFrame(body: body) }
    }
}
