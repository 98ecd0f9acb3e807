import LonglinkCore
internal import CLonglinkProto

/// Internal measurements for tests and benchmarks: how decoding uses its arena, and how much C heap is in use.
extension ProtobufFrameCodec {
    /// How unpacking one server frame body used the arena: allocations served by the block, allocations
    /// that spilled to malloc, and block bytes used. Throws like `decodeServerFrame(body:)`.
    static func arenaUsage(decodingServerFrame body: UnsafeRawBufferPointer) throws(FrameError) -> (
        blockAllocations: Int, fallbackAllocations: Int, blockBytes: Int
    ) {
        try withArena { (arena) throws(FrameError) in
            let base = body.baseAddress!.assumingMemoryBound(to: UInt8.self)
            guard let message = CLonglinkProto_server_frame_unpack(arena, base, body.count, maxBodySize) else {
                CLonglinkProto_server_frame_free(nil, arena)
                throw WireScan.diagnose(body, message: "ServerFrame")
            }
            let usage = (
                Int(arena.pointee.blockAllocations), Int(arena.pointee.fallbackAllocations), Int(arena.pointee.used)
            )
            CLonglinkProto_server_frame_free(message, arena)
            return usage
        }
    }

    /// Bytes of C heap currently allocated (glibc `mallinfo2().uordblks`), across every thread.
    static var heapBytesInUse: Int { Int(CLonglinkProto_heap_bytes_in_use()) }
}
