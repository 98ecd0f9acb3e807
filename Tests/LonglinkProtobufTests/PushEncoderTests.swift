import LonglinkCore
import Testing

@testable import LonglinkProtobuf
import LonglinkTestSupport

/// The hand-written push encoder writes exactly the bytes protobuf-c packs for the same push: checked against the
/// codec's own encoding for thousands of generated records that cover every field, both ways of sending a state,
/// zero values (which proto3 leaves out), varint lengths at their boundaries and the strings the codec refuses.
@Suite("PushEncoder", .ownThreads)
struct PushEncoderTests {
    @Test("encodes every generated record to the same bytes as protobuf-c")
    func matchesProtobufC() throws {
        let codec = ProtobufFrameCodec()
        var random = SplitMix(seed: 19)
        var checked = 0
        for index in 0..<5_000 {
            let record = Self.record(index, &random)
            let skipped = index % 7 == 0
            let expected = try codec.encodedFrame(.push(Push(route: record.route, record: record, skippedBefore: skipped)))
            let actual = try PushEncoder.frame(of: record, skippedBefore: skipped)
            #expect(actual == expected, "record \(index): \(record)")
            if actual != expected { return }
            if !skipped { #expect(try codec.encodedPush(of: record) == expected) }
            if index % 250 == 0 {
                // The sizing pass alone: the frame's length, written into exactly that much storage.
                let frame = try PushEncoder.PushFrame(record, skippedBefore: skipped)
                #expect(frame.total == expected.count)
                #expect(frame.array(of: record) == expected)
            }
            checked += 1
        }
        #expect(checked == 5_000)
    }

    @Test("writes a push into an array: in its storage when free and large enough, never into storage another copy holds")
    func writesInPlace() throws {
        let codec = ProtobufFrameCodec()
        var random = SplitMix(seed: 7)
        var frame: [UInt8] = []
        var reused = 0
        for index in 0..<2_000 {
            let record = Self.record(index, &random)
            let expected = try codec.encodedPush(of: record)
            let before = frame.withUnsafeBufferPointer { $0.baseAddress }
            // Reused: room enough, and at most `slackToTrim` bytes to trim off.
            let roomy = frame.capacity >= expected.count && frame.count - expected.count <= PushEncoder.slackToTrim
            // Every third round another copy holds the previous push: its bytes must survive the write.
            let held: [UInt8]? = index % 3 == 0 ? frame : nil
            let heldBytes = held.map { Array($0) }
            try codec.encodePush(of: record, into: &frame)
            #expect(frame == expected, "record \(index)")
            if let held, let heldBytes { #expect(held == heldBytes, "a held push was overwritten at record \(index)") }
            let after = frame.withUnsafeBufferPointer { $0.baseAddress }
            if roomy && held == nil && before != nil {
                #expect(after == before, "free storage large enough was not reused at record \(index)")
                reused += 1
            }
            if held != nil && before != nil { #expect(after != before) }
        }
        #expect(reused >= 250)  // 300 of the 2,000 generated records (their lengths vary widely)
        // A refused record leaves the array as it was.
        let kept = frame
        var nul = Self.record(1, &random)
        nul.fields = OrderFields(driverID: "d\u{0}x")
        #expect(throws: FrameError.self) { try codec.encodePush(of: nul, into: &frame) }
        #expect(frame == kept)
    }

    @Test("refuses what the codec refuses: a NUL byte in a string, a record of a kind that carries none")
    func refusals() throws {
        let codec = ProtobufFrameCodec()
        let nul = OrderChangeRecord(
            orderID: OrderID("1")!, line: .taxi, fromState: nil, toState: "created",
            fields: OrderFields(driverID: "d\u{0}x"), position: StreamPosition(epoch: 1, offset: 1), timestampMillis: 1
        )
        #expect(throws: FrameError.self) { try codec.encodedFrame(.push(Push(route: nul.route, record: nul))) }
        #expect(throws: FrameError.unencodable("a string field contains a NUL byte")) { try PushEncoder.frame(of: nul) }
        var named = nul
        named.fields = .none
        named.toState = OrderState("odd\u{0}state")
        #expect(throws: FrameError.self) { try PushEncoder.frame(of: named) }
        var other = nul
        other.fields = .none
        other.kind = RouteKind("chat")!
        #expect(throws: FrameError.self) { try codec.encodedFrame(.push(Push(route: other.route, record: other))) }
        #expect(throws: FrameError.self) { try PushEncoder.frame(of: other) }
    }

    // MARK: Generated records

    static let catalogStates: [OrderState] = ["created", "dispatching", "driver_assigned", "in_trip", "completed", "pool_matched"]
    static let namedStates: [OrderState] = ["custom", "awaiting_payment_confirmation_from_the_bank", "", "état-spécial"]
    static let lines = ["taxi", "express", "a", String(repeating: "l", count: 32)]
    static let payloadSizes = [0, 1, 2, 127, 128, 129, 300, 16_383, 16_384]

    static func record(_ index: Int, _ random: inout SplitMix) -> OrderChangeRecord {
        let idLength = [1, 8, 15, 16, 40, 64][random.below(6)]
        let id = String((0..<idLength).map { _ in Character(Unicode.Scalar(UInt8(ascii: "a") + UInt8(random.below(26)))) })
        let kind: RouteKind = random.below(5) == 0 ? .config : .order
        func state() -> OrderState {
            random.below(3) == 0 ? namedStates[random.below(namedStates.count)] : catalogStates[random.below(catalogStates.count)]
        }
        let from: OrderState? = random.below(3) == 0 ? nil : state()
        let to = state()
        func maybe<T>(_ value: @autoclosure () -> T) -> T? { random.below(2) == 0 ? nil : value() }
        let payloadSize = payloadSizes[random.below(payloadSizes.count)]
        let toggles: [ToggleValue] = [.bool(true), .bool(false), .rollout(percent: 0), .rollout(percent: 37),
                                      .rollout(percent: 100), .rollout(percent: 250), .rollout(percent: -3),
                                      .string(""), .string("variant-b ✓")]
        let fields = random.below(4) == 0 ? OrderFields.none : OrderFields(
            driverID: maybe(["", "d-1", String(repeating: "x", count: 200)][random.below(3)]),
            etaSeconds: maybe([0, 1, 127, 128, 300, UInt32.max][random.below(6)]),
            location: maybe(GeoPoint(
                latitudeE6: [0, 1, -1, 52_520_008, -90_000_000, Int32.min, Int32.max][random.below(7)],
                longitudeE6: [0, 13_404_954, -180_000_000, Int32.max][random.below(4)])),
            cancellationReason: maybe(["rider cancelled", "ünïcödé"][random.below(2)]),
            payload: (0..<payloadSize).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) },
            toggle: maybe(toggles[random.below(toggles.count)])
        )
        return OrderChangeRecord(
            orderID: OrderID(id)!,
            line: BusinessLine(lines[random.below(lines.count)])!,
            fromState: from,
            toState: to,
            fields: fields,
            position: StreamPosition(
                epoch: [0, 1, 127, 128, UInt32.max][random.below(5)],
                offset: [0, 1, 127, 128, 16_384, UInt64(1) << 35, UInt64.max][random.below(7)]
            ),
            timestampMillis: [0, 1, 1_764_600_000_000, UInt64.max][random.below(4)],
            kind: kind
        )
    }
}

