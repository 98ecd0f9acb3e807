public import LonglinkCore
internal import CLonglinkProto

/// The production `FrameCodec`: each frame body is a `longlink.v1.ClientFrame` or `ServerFrame` protobuf
/// message (`proto/longlink/v1/frames.proto`), packed and unpacked by protobuf-c.
///
/// Encoding builds the protobuf-c structs on the stack, pointing at the Swift strings' own UTF-8, asks
/// protobuf-c for the packed size, writes the varint prefix and packs the body straight into the caller's
/// `ByteBuffer`: no intermediate arrays. Decoding unpacks into an arena block on the stack (no malloc for a
/// typical frame), converts to Swift values, validates them and resets the arena.
///
/// The hot frames skip protobuf-c where their shape is plain: a publish is read straight from its bytes
/// (`PublishFastDecoder`) and an accepted publish result written straight as bytes (`PublishResultEncoder`), with
/// exactly the values and bytes protobuf-c gives; anything else, hostile input included, goes through protobuf-c.
/// `ProtobufFrameCodec(fastPaths: false)` is protobuf-c alone: the reference the fast paths are tested against.
///
/// Stateless and `Sendable`: one codec may be shared by every thread.
public struct ProtobufFrameCodec: FrameCodec {
    /// Bodies above this size are refused before protobuf-c reads them (the `FrameReader` normally refuses
    /// them much earlier, at its `maxFrameSize`).
    static let maxBodySize = 16 * 1024 * 1024
    /// Size of the decoding arena block. Swift keeps temporary allocations of up to 1 KiB on the stack; a
    /// typical push needs about 300 bytes. Larger frames (a `subscribed` with many records) spill to malloc.
    static let arenaBlockSize = 1024

    /// Whether the hot frames take their hand-written paths (true) or protobuf-c like every other frame.
    public let fastPaths: Bool

    /// Creates the codec; `fastPaths: false` gives protobuf-c alone (the reference for conformance tests).
    public init(fastPaths: Bool = true) {
        self.fastPaths = fastPaths
    }

    /// Encodes a server→client frame, appending its varint length prefix and body to `buffer`.
    public func encode(_ frame: ServerFrame, into buffer: inout ByteBuffer) throws(FrameError) {
        if fastPaths, case .publishResult(let result) = frame,
            case .accepted(let position, let timestampMillis, let deduplicated) = result.outcome
        {
            buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: PublishResultEncoder.maxFrameSize) { out in
                PublishResultEncoder.write(
                    requestID: result.requestID, position: position, timestampMillis: timestampMillis,
                    deduplicated: deduplicated, to: out.baseAddress!.assumingMemoryBound(to: UInt8.self)
                )
            }
            return
        }
        let failure = Self.withCMessage(frame) { message in
            let size = CLonglinkProto_server_frame_packed_size(message)
            Self.writeBody(size: size, into: &buffer) { out, capacity in
                CLonglinkProto_server_frame_pack(message, out, capacity, size)
            }
            return nil
        }
        if let failure { throw failure }
    }

    /// Appends an accepted publish result written by `PublishResultEncoder` (a stack buffer, then one append).
    public func appendAcceptedPublishResult(
        requestID: UInt32, position: StreamPosition, timestampMillis: UInt64, deduplicated: Bool, to bytes: inout [UInt8]
    ) throws(FrameError) {
        guard fastPaths else {
            let result = PublishResult.accepted(
                requestID: requestID, position: position, timestampMillis: timestampMillis, deduplicated: deduplicated)
            bytes += try encodedFrame(.publishResult(result))
            return
        }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: PublishResultEncoder.maxFrameSize) { scratch in
            let count = PublishResultEncoder.write(
                requestID: requestID, position: position, timestampMillis: timestampMillis, deduplicated: deduplicated,
                to: scratch.baseAddress!
            )
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: scratch[..<count]))
        }
    }

    /// Encodes a server→client frame as its own array: the exact size is known before packing, so protobuf-c
    /// packs straight into the array's uninitialized storage (one allocation, no zero-filling, no copy).
    public func encodedFrame(_ frame: ServerFrame) throws(FrameError) -> [UInt8] {
        if fastPaths, case .publishResult(let result) = frame,
            case .accepted(let position, let timestampMillis, let deduplicated) = result.outcome
        {
            return PublishResultEncoder.frame(
                requestID: result.requestID, position: position, timestampMillis: timestampMillis, deduplicated: deduplicated
            )
        }
        var bytes: [UInt8] = []
        let failure = Self.withCMessage(frame) { message in
            let size = CLonglinkProto_server_frame_packed_size(message)
            bytes = Self.packedFrame(size: size) { out in CLonglinkProto_server_frame_pack(message, out, size, size) }
            return nil
        }
        if let failure { throw failure }
        return bytes
    }

    /// Encodes a client→server frame, appending its varint length prefix and body to `buffer`.
    public func encode(_ frame: ClientFrame, into buffer: inout ByteBuffer) throws(FrameError) {
        let failure = Self.withCMessage(frame) { message in
            let size = CLonglinkProto_client_frame_packed_size(message)
            Self.writeBody(size: size, into: &buffer) { out, capacity in
                CLonglinkProto_client_frame_pack(message, out, capacity, size)
            }
            return nil
        }
        if let failure { throw failure }
    }

    /// Decodes one client→server frame body (without its length prefix).
    public func decodeClientFrame(body: UnsafeRawBufferPointer) throws(FrameError) -> ClientFrame {
        try Self.checkBodySize(body)
        if fastPaths, let publish = PublishFastDecoder.decode(body) { return .publish(publish) }
        return try Self.withArena { (arena) throws(FrameError) -> ClientFrame in
            let base = body.baseAddress!.assumingMemoryBound(to: UInt8.self)
            guard let message = CLonglinkProto_client_frame_unpack(arena, base, body.count, Self.maxBodySize) else {
                CLonglinkProto_client_frame_free(nil, arena)
                throw WireScan.diagnose(body, message: "ClientFrame")
            }
            defer { CLonglinkProto_client_frame_free(message, arena) }
            guard VarintBounds.hold(in: body, CLonglinkProto_client_frame_descriptor()) else {
                throw .malformed(VarintBounds.violation("ClientFrame"))
            }
            return try Self.clientFrame(from: message.pointee)
        }
    }

    /// Decodes one server→client frame body (without its length prefix).
    public func decodeServerFrame(body: UnsafeRawBufferPointer) throws(FrameError) -> ServerFrame {
        try Self.checkBodySize(body)
        return try Self.withArena { (arena) throws(FrameError) -> ServerFrame in
            let base = body.baseAddress!.assumingMemoryBound(to: UInt8.self)
            guard let message = CLonglinkProto_server_frame_unpack(arena, base, body.count, Self.maxBodySize) else {
                CLonglinkProto_server_frame_free(nil, arena)
                throw WireScan.diagnose(body, message: "ServerFrame")
            }
            defer { CLonglinkProto_server_frame_free(message, arena) }
            guard VarintBounds.hold(in: body, CLonglinkProto_server_frame_descriptor()) else {
                throw .malformed(VarintBounds.violation("ServerFrame"))
            }
            return try Self.serverFrame(from: message.pointee)
        }
    }

    // MARK: Shared plumbing

    /// Writes `size` as a varint, then lets `pack` fill exactly `size` bytes at the writer index.
    private static func writeBody(
        size: Int,
        into buffer: inout ByteBuffer,
        _ pack: (UnsafeMutablePointer<UInt8>, Int) -> Int
    ) {
        buffer.writeVarint(UInt64(size))
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: size) { out in
            let written = pack(out.baseAddress!.assumingMemoryBound(to: UInt8.self), out.count)
            precondition(written == size, "protobuf-c packed \(written) bytes, announced \(size)")
            return written
        }
    }

    /// An array holding `size` as a varint followed by the `size` bytes `pack` writes at the pointer it gets.
    private static func packedFrame(size: Int, _ pack: (UnsafeMutablePointer<UInt8>) -> Int) -> [UInt8] {
        var prefixLength = 1
        var rest = UInt64(size) >> 7
        while rest != 0 {
            prefixLength += 1
            rest >>= 7
        }
        return FrameBytes.array(capacity: prefixLength + size) { out, initialized in
            var value = UInt64(size)
            for index in 0..<prefixLength - 1 {
                out[index] = UInt8(truncatingIfNeeded: value) | 0x80
                value >>= 7
            }
            out[prefixLength - 1] = UInt8(truncatingIfNeeded: value)
            let written = pack(out.baseAddress! + prefixLength)
            precondition(written == size, "protobuf-c packed \(written) bytes, announced \(size)")
            initialized = prefixLength + size
        }
    }

    private static func checkBodySize(_ body: UnsafeRawBufferPointer) throws(FrameError) {
        guard body.count > 0, body.baseAddress != nil else { throw .empty }
        guard body.count <= maxBodySize else { throw .oversized(length: UInt64(body.count), limit: maxBodySize) }
    }

    /// Runs `body` with an arena whose block lives on the stack for the duration of the call.
    static func withArena<R>(
        _ body: (UnsafeMutablePointer<CLonglinkProto_Arena>) throws(FrameError) -> R
    ) throws(FrameError) -> R {
        try withUnsafeTemporaryAllocation(byteCount: arenaBlockSize, alignment: 16) {
            (block) throws(FrameError) -> R in
            var arena = CLonglinkProto_Arena()
            return try withUnsafeMutablePointer(to: &arena) { (arena) throws(FrameError) -> R in
                CLonglinkProto_arena_init(arena, block.baseAddress, block.count)
                return try body(arena)
            }
        }
    }
}
