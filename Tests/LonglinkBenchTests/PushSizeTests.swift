import LonglinkBench
import LonglinkCore
import LonglinkProtobuf
import Testing

@Suite("Push size")
struct PushSizeTests {
    @Test("a typical push in protobuf is at most 35 % of the same push as JSON")
    func protobufVersusJSON() {
        let (protobuf, json) = PushSizeComparison.measure()
        #expect(protobuf == 64)
        #expect(json > 200)
        #expect(Double(protobuf) <= 0.35 * Double(json), "protobuf \(protobuf) B vs JSON \(json) B")
    }

    @Test("the push names the order id and the line once, in its route, and no idempotency key")
    func noRepeatedOrder() throws {
        let frame = PushSizeComparison.typicalPush()
        guard case .push(var push) = frame else {
            Issue.record("the typical push is not a push frame: \(frame)")
            return
        }
        push.record.idempotencyKey = "idem-key-1"
        var buffer = ByteBuffer()
        try ProtobufFrameCodec().encode(ServerFrame.push(push), into: &buffer)
        let body = buffer.readableArray
        func occurrences(_ text: String) -> Int {
            let needle = Array(text.utf8)
            return (0...(body.count - needle.count)).filter { Array(body[$0..<($0 + needle.count)]) == needle }.count
        }
        #expect(occurrences("8812") == 1)
        #expect(occurrences("taxi") == 1)
        #expect(occurrences("idem-key-1") == 0)
        #expect(body.count == 1 + 64)
    }

    @Test("the codec benchmark runs and reports positive rates")
    func benchmark() {
        let (encodes, decodes) = CodecBenchmark.run(iterations: 1_000)
        #expect(encodes > 0 && decodes > 0)
    }
}
