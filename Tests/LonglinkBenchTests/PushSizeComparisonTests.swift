import LonglinkCore
import LonglinkTestSupport
import Testing

@testable import LonglinkBench

@Suite("Push size comparison JSON", .ownThreads)
struct PushSizeComparisonTests {
    @Test("the typical push as JSON is the documented 272 bytes, written by LonglinkJSON")
    func documentedText() throws {
        guard case .push(let push) = PushSizeComparison.typicalPush() else {
            Issue.record("the typical push is not a push frame")
            return
        }
        let expected = #"{"push":{"route":"order://taxi/8812","fromState":"driver_assigned","toState":"driver_arriving","#
            + #""fields":{"driverId":"driver-4711","etaSeconds":240,"location":{"latitude":31.230416,"#
            + #""longitude":121.473701}},"timestampMillis":1732900000000,"position":{"epoch":1,"offset":3}}}"#
        #expect(PushSizeComparison.jsonBody(of: push) == expected)
        #expect(PushSizeComparison.measure() == (protobufBytes: 64, jsonBytes: 272))
    }

    @Test("payload bytes are standard base64 with padding", arguments: [
        ([UInt8](), ""), (Array("f".utf8), "Zg=="), (Array("fo".utf8), "Zm8="), (Array("foo".utf8), "Zm9v"),
        (Array("foobar".utf8), "Zm9vYmFy"), ([0xFB, 0xFF], "+/8="),
    ])
    func base64(_ bytes: [UInt8], _ text: String) {
        #expect(PushSizeComparison.base64(bytes) == text)
    }
}
