@testable import LonglinkBench
import LonglinkCore
import LonglinkProtobuf
import LonglinkTestSupport
import Testing

/// The load generator writes and reads its hot frames itself (no Swift values, no protobuf-c, no hiredis per
/// message): these tests hold those shortcuts to what the codec and RESP say.
@Suite("load generator frames", .ownThreads)
struct LoadGeneratorFrameTests {
    let codec = ProtobufFrameCodec()

    /// The body of a framed `bytes` (after its varint length prefix, which must cover the rest exactly).
    func body(_ bytes: [UInt8]) throws -> [UInt8] {
        var length = 0
        var shift = 0
        var index = 0
        while true {
            let byte = bytes[index]
            index += 1
            length |= Int(byte & 0x7F) << shift
            if byte < 0x80 { break }
            shift += 7
        }
        try #require(bytes.count - index == length, "the length prefix covers the frame")
        return Array(bytes[index...])
    }

    @Test("PublishEncoder's frames decode with the codec to the publish the codec would have encoded", arguments: [0, 1, 2, 3])
    func publishFramesDecode(step: Int) throws {
        let names = RouteNames()
        let plan = ReassignmentPlan(names: names, routes: 3)
        var frames: [UInt8] = []
        let stamp: (UInt64, UInt64) = (0x0102_0304_0506_0708, 42)
        for _ in 0...step {
            frames = []
            plan.appendPublish(route: 2, requestID: 300 + UInt32(step), stamp: stamp, payloadSize: 128, idempotencyKey: step == 3 ? "bench-7" : "", to: &frames)
        }
        let decoded = try body(frames).withUnsafeBytes { try codec.decodeClientFrame(body: $0) }
        let state = ReassignmentPlan.state(afterSteps: step)
        var fields = OrderFields(payload: BenchPayload.make(size: 128, timestamp: stamp.0, sequence: stamp.1))
        if state == BuiltInLines.driverAssigned { fields.driverID = "driver-1" }
        let expected = PublishRequest(
            requestID: 300 + UInt32(step),
            orderID: names.orderID(2),
            line: "taxi",
            targetState: state.name,
            fields: fields,
            idempotencyKey: step == 3 ? "bench-7" : ""
        )
        #expect(decoded == .publish(expected))
    }

    @Test("a publish to a state without a protocol code carries its name, as the codec writes it")
    func customStateField() throws {
        let field = PublishEncoder.stateField(OrderState("waiting_for_rain"))
        let nameKey: UInt8 = 5 << 3 | 2  // target_state_name, length-delimited
        #expect(field.first == nameKey)
        #expect(Array(field.dropFirst(2)) == Array("waiting_for_rain".utf8))
        #expect(PublishEncoder.stateField(BuiltInLines.created) == [4 << 3, 1])
    }

    @Test("PushView reads route, position and payload from the codec's push; other frames are left to the codec")
    func pushScan() throws {
        let payload = BenchPayload.make(size: 64, timestamp: 99, sequence: 7)
        let push = Push(
            route: .order(.taxi, OrderID("b1-3")!),
            record: OrderChangeRecord(
                orderID: OrderID("b1-3")!, line: .taxi, fromState: "dispatching", toState: "driver_assigned",
                fields: OrderFields(driverID: "d", payload: payload),
                position: StreamPosition(epoch: 4, offset: 300), timestampMillis: 5
            )
        )
        let frame = try body(try codec.encodedFrame(.push(push)))
        let view = try #require(frame.withUnsafeBytes { PushView.scan($0).map { (Array($0.route), $0.offset, $0.epoch, Array($0.payload)) } })
        #expect(view.0 == Array("order://taxi/b1-3".utf8))
        #expect(view.1 == 300)
        #expect(view.2 == 4)
        #expect(view.3 == payload)
        let ping = try body(try codec.encodedFrame(.ping))
        #expect(ping.withUnsafeBytes { PushView.scan($0) } == nil)
        // Cut short anywhere, a push is not a push (the codec then reports the damage).
        for cut in 1..<frame.count {
            #expect(Array(frame[..<cut]).withUnsafeBytes { PushView.scan($0) } == nil, "cut at \(cut)")
        }
    }

    @Test("PublishResultView reads accepted results; a refusal goes to the codec")
    func publishResultScan() throws {
        for deduplicated in [false, true] {
            let accepted = PublishResult(
                requestID: 70_000,
                outcome: .accepted(position: StreamPosition(epoch: 1, offset: 9), timestampMillis: 12, deduplicated: deduplicated)
            )
            let frame = try body(try codec.encodedFrame(.publishResult(accepted)))
            let view = try #require(frame.withUnsafeBytes { PublishResultView.scan($0) })
            #expect(view.requestID == 70_000)
            #expect(view.deduplicated == deduplicated)
        }
        let refused = PublishResult(requestID: 5, outcome: .refused(ErrorFrame(requestID: 5, code: .badRequest, message: "no")))
        let frame = try body(try codec.encodedFrame(.publishResult(refused)))
        #expect(frame.withUnsafeBytes { PublishResultView.scan($0) } == nil)
    }

    @Test("RedisReplyScanner splits messages, subscribe confirmations and PUBLISH answers; nothing until a reply is whole")
    func redisReplies() throws {
        let payload: [UInt8] = [0, 1, 13, 10, 36, 255]  // binary-safe: CRLF and `$` inside the payload
        let message = Array("*3\r\n$7\r\nmessage\r\n$4\r\nch.1\r\n$6\r\n".utf8) + payload + [13, 10]
        let confirmation = Array("*3\r\n$9\r\nsubscribe\r\n$4\r\nch.1\r\n:1\r\n".utf8)
        let answers = Array(":1000\r\n-ERR wrong\r\n+OK\r\n".utf8)
        let stream = confirmation + message + answers
        var seen: [String] = []
        try stream.withUnsafeBytes { bytes in
            var offset = 0
            while let (reply, end) = try RedisReplyScanner.next(bytes, at: offset) {
                offset = end
                switch reply {
                case .push(let kind, let channel, let body?, _):
                    seen.append("\(String(decoding: kind, as: UTF8.self)) \(String(decoding: channel, as: UTF8.self)) \(Array(body))")
                case .push(let kind, _, nil, let count): seen.append("\(String(decoding: kind, as: UTF8.self)) \(count)")
                case .integer(let value): seen.append("integer \(value)")
                case .error(let text): seen.append("error \(String(decoding: text, as: UTF8.self))")
                case .status(let text): seen.append("status \(String(decoding: text, as: UTF8.self))")
                default: seen.append("other")
                }
            }
            #expect(offset == bytes.count)
        }
        #expect(seen == ["subscribe 1", "message ch.1 \(payload)", "integer 1000", "error ERR wrong", "status OK"])
        for cut in 0..<message.count {
            let partial = try Array(message[..<cut]).withUnsafeBytes { try RedisReplyScanner.next($0, at: 0) }
            #expect(partial == nil, "cut at \(cut)")
        }
        #expect(throws: BenchError.self) { try Array("?x\r\n".utf8).withUnsafeBytes { try RedisReplyScanner.next($0, at: 0) } }
    }

    @Test("the publishes in flight: found by id, oldest first, and the ring grows past its size")
    func pendingPublishes() {
        let pending = PendingPublishes()
        for id in UInt32(1)...600 {
            pending.insert(PendingPublishes.Entry(requestID: id, route: Int(id), ordinal: UInt64(id), frame: nil))
        }
        #expect(pending.count == 600)
        #expect(pending.remove(601) == nil)
        #expect(pending.remove(300)?.route == 300)
        #expect(pending.remove(300) == nil)
        #expect(pending.entries.map(\.requestID) == Array(1...299) + Array(301...600))
    }

    @Test("callgrind totals are read from the totals line, or the summary line of older files")
    func callgrindTotals() {
        let text = """
            # callgrind format
            version: 1
            creator: callgrind-3.19.0
            events: Ir
            summary: 1234
            fn=(1) main
            0 1234
            totals: 5678
            """
        #expect(CallgrindFile.parse(text[...])?.instructions == 5678)
        #expect(CallgrindFile.parse("events: Ir\nsummary: 99\nfn=(1) f\n0 99\n")?.instructions == 99)
        #expect(CallgrindFile.parse("events: Ir\nfn=(1) f\n0 99\n") == nil, "no totals: the server did not finish")
    }
}

extension PendingPublishes.Entry: Equatable {
    static func == (left: Self, right: Self) -> Bool { left.requestID == right.requestID && left.route == right.route }
}
