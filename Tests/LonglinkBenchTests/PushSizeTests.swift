import Foundation
import LonglinkBench
import LonglinkCore
import LonglinkProtobuf
import LonglinkTestSupport
import Testing

@Suite("Push size", .ownThreads)
struct PushSizeTests {
    /// The JSON `PushSizeComparison` says it measures (its doc comment): the typical push with every field, as a
    /// JSON protocol would send it.
    static let documentedJSON = #"{"push":{"route":"order://taxi/8812","fromState":"driver_assigned","toState":"driver_arriving","#
        + #""fields":{"driverId":"driver-4711","etaSeconds":240,"location":{"latitude":31.230416,"longitude":121.473701}},"#
        + #""timestampMillis":1732900000000,"position":{"epoch":1,"offset":3}}}"#

    @Test("a typical push in protobuf is at most 35 % of the same push as JSON")
    func protobufVersusJSON() {
        let (protobuf, json) = PushSizeComparison.measure()
        #expect(protobuf == 64)
        #expect(json == Self.documentedJSON.utf8.count, "the JSON measured is the documented one, byte for byte in size")
        #expect(Double(protobuf) <= 0.35 * Double(json), "protobuf \(protobuf) B vs JSON \(json) B")
    }

    @Test("the protobuf bytes measured carry the whole push: they decode back to the same frame")
    func protobufCarriesEverything() throws {
        let frame = PushSizeComparison.typicalPush()
        var buffer = ByteBuffer()
        try ProtobufFrameCodec().encode(frame, into: &buffer)
        let body = try #require(try FrameReader().nextFrame(in: &buffer) { Array($0) })
        #expect(body.count == PushSizeComparison.measure().protobufBytes)
        let decoded = try body.withUnsafeBytes { (bytes) throws in try ProtobufFrameCodec().decodeServerFrame(body: bytes) }
        #expect(decoded == frame)
    }

    @Test("the JSON it is compared with names every field of the push, with the push's values")
    func jsonCarriesEverything() throws {
        guard case .push(let push) = PushSizeComparison.typicalPush() else {
            Issue.record("the typical push is not a push frame")
            return
        }
        let object = try #require(try JSONSerialization.jsonObject(with: Data(Self.documentedJSON.utf8)) as? [String: Any])
        let body = try #require(object["push"] as? [String: Any])
        let record = push.record
        #expect(body["route"] as? String == push.route.text)
        #expect(body["fromState"] as? String == record.fromState?.name)
        #expect(body["toState"] as? String == record.toState.name)
        #expect((body["timestampMillis"] as? NSNumber)?.uint64Value == record.timestampMillis)
        let position = try #require(body["position"] as? [String: Any])
        #expect((position["epoch"] as? NSNumber)?.uint32Value == record.position.epoch)
        #expect((position["offset"] as? NSNumber)?.uint64Value == record.position.offset)
        let fields = try #require(body["fields"] as? [String: Any])
        #expect(fields["driverId"] as? String == record.fields.driverID)
        #expect((fields["etaSeconds"] as? NSNumber)?.uint32Value == record.fields.etaSeconds)
        let location = try #require(fields["location"] as? [String: Any])
        let point = try #require(record.fields.location)
        #expect((location["latitude"] as? NSNumber)?.doubleValue == Double(point.latitudeE6) / 1e6)
        #expect((location["longitude"] as? NSNumber)?.doubleValue == Double(point.longitudeE6) / 1e6)
        #expect(Set(body.keys) == ["route", "fromState", "toState", "fields", "timestampMillis", "position"])
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
