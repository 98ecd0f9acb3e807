import LonglinkCore
import Testing

@testable import LonglinkProtobuf

/// "No heap allocation per frame" on the hot path.
///
/// Encoding: glibc's `mallinfo2().uordblks` (bytes in use, all threads) is sampled around 10,000 encodes of the
/// typical push into one reused buffer, after a warm-up. A per-frame allocation that is kept (a leak, a growing
/// cache) would add at least 16 bytes × 10,000 frames; other tests running in parallel add noise, so the
/// window is retried a few times and must be quiet once.
///
/// Decoding: protobuf-c's allocations all go through the arena, whose counters say how many were served
/// from the stack block and how many spilled to malloc. (The Swift values a decode returns, e.g. a route
/// string longer than 15 bytes, are allocated by design.)
@Suite("Allocations on the hot path", .serialized)
struct AllocationTests {
    @Test("encoding a push into a reused buffer does not grow the heap")
    func encodeDoesNotAllocate() throws {
        let codec = ProtobufFrameCodec()
        let frame = Samples.typicalPush()
        var buffer = ByteBuffer(capacity: 1_024)
        for _ in 0..<1_000 {
            buffer.clear()
            try codec.encode(frame, into: &buffer)
        }
        // Short windows, many tries: a kept allocation per frame (≥ 32 bytes each in glibc) adds ≥ 64 KiB per
        // 2,000 encodes every time, while noise from other threads only has to stay away from one window.
        // At least 25 windows, and more for up to 30 s while parallel suites (bench end to end) keep the heap busy.
        var growths: [Int] = []
        let deadline = ContinuousClock.now + .seconds(30)
        while growths.count < 25 || ContinuousClock.now < deadline {
            let before = ProtobufFrameCodec.heapBytesInUse
            for _ in 0..<2_000 {
                buffer.clear()
                try codec.encode(frame, into: &buffer)
            }
            let growth = ProtobufFrameCodec.heapBytesInUse - before
            growths.append(growth)
            if abs(growth) < 16 * 1_024 { break }
        }
        #expect(growths.contains { abs($0) < 16 * 1_024 }, "heap growth per 2,000 encodes: \(growths)")
        #expect(buffer.readableBytes == 65)
    }

    @Test("decoding a typical push unpacks entirely inside the stack arena")
    func decodeUsesArena() throws {
        var buffer = ByteBuffer()
        try ProtobufFrameCodec().encode(Samples.typicalPush(), into: &buffer)
        let body = try #require(try FrameReader().nextFrame(in: &buffer) { Array($0) })
        let usage = try ProtobufFrameCodec.arenaUsage(decodingServerFrame: body)
        // ServerFrame, Push, OrderFields, route and driver id.
        #expect(usage.blockAllocations == 5)
        #expect(usage.fallbackAllocations == 0)
        #expect(usage.blockBytes <= ProtobufFrameCodec.arenaBlockSize)
    }

    @Test("a frame bigger than the arena block spills to malloc and is freed")
    func bigFrameSpills() throws {
        let record = Samples.record(on: Samples.taxi8812, from: "in_trip", to: "custom", fields: Samples.fullFields,
                                    offset: 1)
        let frame = ServerFrame.subscribed(Subscribed(
            requestID: 1, route: Samples.taxi8812, snapshot: nil, position: .zero, recovered: true,
            missed: Array(repeating: record, count: 50)))
        var buffer = ByteBuffer()
        try ProtobufFrameCodec().encode(frame, into: &buffer)
        let body = try #require(try FrameReader().nextFrame(in: &buffer) { Array($0) })
        let usage = try ProtobufFrameCodec.arenaUsage(decodingServerFrame: body)
        #expect(usage.fallbackAllocations > 0)
        // 200 leaked decodes would keep 200 × 50 payload copies (> 2 MB). The heap is process-wide and other
        // suites run in parallel, so the window is retried and must be quiet once.
        var growths: [Int] = []
        for _ in 0..<5 {
            let heapBefore = ProtobufFrameCodec.heapBytesInUse
            for _ in 0..<200 {
                _ = try ProtobufFrameCodec.arenaUsage(decodingServerFrame: body)
            }
            let growth = ProtobufFrameCodec.heapBytesInUse - heapBefore
            growths.append(growth)
            if growth < 1_000_000 { break }
        }
        #expect(growths.contains { $0 < 1_000_000 }, "heap growth per 200 decodes: \(growths)")
        let decoded = try body.withUnsafeBytes { (bytes) throws in try ProtobufFrameCodec().decodeServerFrame(body: bytes) }
        #expect(decoded == frame)
    }
}
