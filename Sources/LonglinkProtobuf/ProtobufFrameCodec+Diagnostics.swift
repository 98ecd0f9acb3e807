import LonglinkCore
internal import CLonglinkProto

/// How unpacking one frame used the decoding arena.
struct ArenaUsage: Hashable {
    /// Allocations served from the stack block.
    var blockAllocations: Int
    /// Allocations that did not fit and went to malloc (and were freed).
    var fallbackAllocations: Int
    /// Bytes of the block used.
    var blockBytes: Int
}

/// Internal measurements for tests and benchmarks: how decoding uses its arena, and how much C heap is in use.
extension ProtobufFrameCodec {
    /// Unpacks one server frame body the way `decodeServerFrame(body:)` does and reports the arena's use.
    static func arenaUsage(decodingServerFrame body: [UInt8]) throws(FrameError) -> ArenaUsage {
        let result: Result<ArenaUsage, FrameError> = body.withUnsafeBytes { body in
            do throws(FrameError) {
                return .success(try arenaUsage(body))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    private static func arenaUsage(_ body: UnsafeRawBufferPointer) throws(FrameError) -> ArenaUsage {
        guard let base = body.baseAddress?.assumingMemoryBound(to: UInt8.self) else { throw .empty }
        return try withArena { (arena) throws(FrameError) -> ArenaUsage in
            guard let message = CLonglinkProto_server_frame_unpack(arena, base, body.count, maxBodySize) else {
                CLonglinkProto_server_frame_free(nil, arena)
                throw WireScan.diagnose(body, message: "ServerFrame")
            }
            let usage = ArenaUsage(
                blockAllocations: Int(arena.pointee.blockAllocations),
                fallbackAllocations: Int(arena.pointee.fallbackAllocations),
                blockBytes: Int(arena.pointee.used)
            )
            CLonglinkProto_server_frame_free(message, arena)
            return usage
        }
    }

    /// Bytes of C heap currently allocated (glibc `mallinfo2().uordblks`), across every thread.
    static var heapBytesInUse: Int { Int(CLonglinkProto_heap_bytes_in_use()) }
}
