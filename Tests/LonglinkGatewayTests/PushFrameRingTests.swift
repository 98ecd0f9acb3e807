@testable import LonglinkGateway
import LonglinkCore
import LonglinkProtobuf
import LonglinkTestSupport
import Testing

/// The fan-out's ring of push frames rewrites a frame in place only once nobody else holds it: a push still queued
/// for a subscriber keeps its bytes however often the ring comes round.
@Suite("Push frame ring", .ownThreads)
struct PushFrameRingTests {
    private static func record(_ order: String, offset: UInt64, driver: String? = nil) -> OrderChangeRecord {
        OrderChangeRecord(
            orderID: OrderFixtures.id(order),
            line: .taxi,
            fromState: nil,
            toState: BuiltInLines.created,
            fields: OrderFields(driverID: driver),
            position: StreamPosition(epoch: 1, offset: offset),
            timestampMillis: 1_000 + offset
        )
    }

    private static func address(_ frame: [UInt8]) -> UnsafePointer<UInt8>? {
        frame.withUnsafeBufferPointer { $0.baseAddress }
    }

    /// The push of order `o<offset>` from `ring`, checked against the codec's own bytes.
    private static func push(_ offset: Int, _ ring: PushFrameRing, _ codec: ProtobufFrameCodec) throws -> [UInt8] {
        let record = Self.record("o\(offset)", offset: UInt64(offset))
        let frame = try ring.withFrames { frames throws(FrameError) in try frames.push(of: record, with: codec) }
        #expect(frame == (try codec.encodedPush(of: record)), "push \(offset)")
        return frame
    }

    @Test("a released frame's storage is used again; a held one keeps its bytes and its slot gets new storage")
    func reusesOnlyReleasedFrames() throws {
        let codec = ProtobufFrameCodec()
        let ring = PushFrameRing(slots: 4)
        // Round one: four pushes, all held (queued for subscribers).
        let held = try (1...4).map { try Self.push($0, ring, codec) }
        let expected = held.map { Array($0) }
        // Round two while they are held: new storage for each, the held bytes untouched.
        var second = try (5...8).map { try Self.push($0, ring, codec) }
        #expect(held == expected)
        for (old, new) in zip(held, second) { #expect(Self.address(old) != Self.address(new)) }
        // Released (flushed by every subscriber): round three writes into round two's storage.
        let addresses = second.map(Self.address)
        second.removeAll()
        for (slot, offset) in (9...12).enumerated() {
            #expect(Self.address(try Self.push(offset, ring, codec)) == addresses[slot])
        }
    }

    @Test("a frame larger than a slot keeps is handed out and not kept")
    func dropsLargeFrames() throws {
        let codec = ProtobufFrameCodec()
        let ring = PushFrameRing(slots: 1)
        let large = Self.record("big", offset: 1, driver: String(repeating: "d", count: PushFrameRing.largestKept + 10))
        let frame = try ring.withFrames { frames throws(FrameError) in try frames.push(of: large, with: codec) }
        #expect(frame == (try codec.encodedPush(of: large)))
        #expect(frame.capacity > PushFrameRing.largestKept)
        #expect(ring.keptCapacity == 0, "the large frame's storage stayed in the ring")
        let small = Self.record("small", offset: 2)
        let next = try ring.withFrames { frames throws(FrameError) in try frames.push(of: small, with: codec) }
        #expect(next == (try codec.encodedPush(of: small)))
        #expect(ring.keptCapacity == next.capacity)
        #expect(next.capacity < PushFrameRing.largestKept)
    }
}
