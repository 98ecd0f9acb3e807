import LonglinkCore
import Testing

@testable import LonglinkProtobuf
import LonglinkTestSupport

/// The accepted publish result's hand-written encoder (`PublishResultEncoder`) against protobuf-c: the same bytes
/// for every value, zero and maximal ones included, through both encoding entry points.
@Suite("Publish result encoder conforms to protobuf-c", .ownThreads)
struct FastEncoderConformanceTests {
    static let fast = ProtobufFrameCodec()
    static let reference = ProtobufFrameCodec(fastPaths: false)

    static func expectSameBytes(_ result: PublishResult, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let frame = ServerFrame.publishResult(result)
        let expected = try reference.encodedFrame(frame)
        #expect(try fast.encodedFrame(frame) == expected, "\(result)", sourceLocation: sourceLocation)
        var buffer = ByteBuffer()
        buffer.writeBytes([0xAB])  // after bytes already there
        try fast.encode(frame, into: &buffer)
        #expect(Array(buffer.readableArray.dropFirst()) == expected, "\(result)", sourceLocation: sourceLocation)
        guard case .accepted(let position, let timestamp, let deduplicated) = result.outcome else { return }
        let direct = PublishResultEncoder.frame(
            requestID: result.requestID, position: position, timestampMillis: timestamp, deduplicated: deduplicated)
        #expect(direct == expected, "\(result)", sourceLocation: sourceLocation)
        #expect(direct.count <= PublishResultEncoder.maxFrameSize)
        var decoding = ByteBuffer(bytes: direct)
        #expect(try reference.decodeNextServerFrame(from: &decoding) == frame, sourceLocation: sourceLocation)
    }

    @Test("accepted results: the same bytes as protobuf-c for zero, small, boundary and maximal values")
    func boundaries() throws {
        let requestIDs: [UInt32] = [0, 1, 127, 128, 16_383, 16_384, 2_097_151, 2_097_152, UInt32.max]
        let epochs: [UInt32] = [0, 1, 300, UInt32.max]
        let offsets: [UInt64] = [0, 1, 127, 128, 1 << 35, UInt64.max]
        let timestamps: [UInt64] = [0, 1, 1_764_000_000_000, UInt64.max]
        for requestID in requestIDs {
            for epoch in epochs {
                for offset in offsets {
                    for timestamp in timestamps {
                        for deduplicated in [false, true] {
                            try Self.expectSameBytes(PublishResult(
                                requestID: requestID,
                                outcome: .accepted(position: StreamPosition(epoch: epoch, offset: offset),
                                                   timestampMillis: timestamp, deduplicated: deduplicated)))
                        }
                    }
                }
            }
        }
    }

    @Test("accepted results with random values, and refusals (which protobuf-c encodes)")
    func randomValues() throws {
        var random = SplitMix(seed: 5)
        for _ in 0..<5_000 {
            let shift = { (random: inout SplitMix) in random.next() >> (random.next() % 64) }
            try Self.expectSameBytes(PublishResult(
                requestID: UInt32(truncatingIfNeeded: shift(&random)),
                outcome: .accepted(position: StreamPosition(epoch: UInt32(truncatingIfNeeded: shift(&random)), offset: shift(&random)),
                                   timestampMillis: shift(&random), deduplicated: random.next() % 2 == 0)))
        }
        try Self.expectSameBytes(PublishResult(
            requestID: 3, outcome: .refused(ErrorFrame(requestID: 3, code: .rateLimited, message: "slow down"))))
    }
}
