/// The wire format of frames: the only code that knows bytes. `ProtobufFrameCodec` (module LonglinkProtobuf)
/// is the production implementation.
///
/// Framing is shared by every codec and lives in `FrameReader`: each frame is its body's length as a
/// base-128 varint followed by the body. A codec turns one body into a frame and a frame into a prefixed body.
/// Encoding appends to a caller-owned `ByteBuffer`, so a push is encoded once and its bytes are shared by
/// every subscriber.
public protocol FrameCodec: Sendable {
    /// Encodes a server→client frame, appending the length prefix and the body to `buffer`.
    func encode(_ frame: ServerFrame, into buffer: inout ByteBuffer) throws(FrameError)
    /// Encodes a client→server frame, appending the length prefix and the body to `buffer`.
    func encode(_ frame: ClientFrame, into buffer: inout ByteBuffer) throws(FrameError)
    /// Decodes one client→server frame body (without its length prefix).
    func decodeClientFrame(body: UnsafeRawBufferPointer) throws(FrameError) -> ClientFrame
    /// Decodes one server→client frame body (without its length prefix).
    func decodeServerFrame(body: UnsafeRawBufferPointer) throws(FrameError) -> ServerFrame
    /// Encodes a server→client frame (length prefix and body) as an array of its own: the bytes a gateway queues,
    /// shared by every subscriber of a push. The default encodes into a `ByteBuffer` and copies the bytes out.
    func encodedFrame(_ frame: ServerFrame) throws(FrameError) -> [UInt8]
    /// The push of `record` on its own route (`encodedFrame(.push(Push(route: record.route, record: record)))`):
    /// encoded once per record per process on the fan-out path, and shared by every subscriber on every loop.
    func encodedPush(of record: OrderChangeRecord) throws(FrameError) -> [UInt8]
    /// Writes `encodedPush(of: record)`'s bytes into `frame`, replacing what it held and reusing its storage when
    /// `frame` is its only owner and it is large enough (the fan-out's ring of frames: a push encoded with no
    /// allocation). Throws before changing `frame`. The default assigns `encodedPush(of:)`.
    func encodePush(of record: OrderChangeRecord, into frame: inout [UInt8]) throws(FrameError)
    /// Appends the framed answer to an accepted publish (`.publishResult(PublishResult(requestID:, outcome:
    /// .accepted(…)))`) to `bytes`: the one frame every publish gets back, written into the connection's reply
    /// chunk with no array of its own. The default appends `encodedFrame`'s bytes.
    func appendAcceptedPublishResult(
        requestID: UInt32, position: StreamPosition, timestampMillis: UInt64, deduplicated: Bool, to bytes: inout [UInt8]
    ) throws(FrameError)
}

extension FrameCodec {
    /// Encodes into a fresh `ByteBuffer` and copies the bytes out.
    public func encodedFrame(_ frame: ServerFrame) throws(FrameError) -> [UInt8] {
        var buffer = ByteBuffer()
        try encode(frame, into: &buffer)
        return buffer.readableArray
    }

    /// Appends `encodedFrame(.publishResult(…accepted…))`.
    public func appendAcceptedPublishResult(
        requestID: UInt32, position: StreamPosition, timestampMillis: UInt64, deduplicated: Bool, to bytes: inout [UInt8]
    ) throws(FrameError) {
        let result = PublishResult.accepted(
            requestID: requestID, position: position, timestampMillis: timestampMillis, deduplicated: deduplicated)
        bytes += try encodedFrame(.publishResult(result))
    }

    /// Encodes `.push(Push(route: record.route, record: record))` with `encodedFrame`.
    public func encodedPush(of record: OrderChangeRecord) throws(FrameError) -> [UInt8] {
        try encodedFrame(.push(Push(route: record.route, record: record)))
    }

    /// Assigns `encodedPush(of:)` (new storage every time).
    public func encodePush(of record: OrderChangeRecord, into frame: inout [UInt8]) throws(FrameError) {
        frame = try encodedPush(of: record)
    }
}

/// Why bytes could not be turned into a frame (or a frame into bytes). Every case makes the receiving side
/// send a `protocolViolation` (or `frameTooLarge`) disconnect and close only that connection.
public enum FrameError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The length prefix announces more than the maximum frame size; nothing was allocated.
    case oversized(length: UInt64, limit: Int)
    /// The length prefix is longer than 10 bytes or overflows 64 bits.
    case varintOverflow
    /// A zero-length frame (no frame kind).
    case empty
    /// The body ended in the middle of a field.
    case truncated
    /// The body is not a valid message (wrong wire type, bad nesting, invalid UTF-8, ...).
    case malformed(String)
    /// The frame's `oneof` holds no case this side knows (a newer peer, or the wrong direction).
    case unknownFrameKind
    /// A field holds a value this side cannot accept (e.g. a pushed route that does not parse).
    case invalidValue(String)
    /// The frame could not be encoded (a value too large for the wire format).
    case unencodable(String)

    public var description: String {
        switch self {
        case .oversized(let length, let limit): "FrameError: frame of \(length) bytes exceeds the limit of \(limit)"
        case .varintOverflow: "FrameError: length prefix is not a valid varint (more than 10 bytes or above 2^64)"
        case .empty: "FrameError: empty frame"
        case .truncated: "FrameError: frame body ends in the middle of a field"
        case .malformed(let why): "FrameError: malformed frame: \(why)"
        case .unknownFrameKind: "FrameError: unknown frame kind (newer protocol or wrong direction)"
        case .invalidValue(let why): "FrameError: invalid value: \(why)"
        case .unencodable(let why): "FrameError: cannot encode: \(why)"
        }
    }
}
