@testable import LonglinkGateway
import LonglinkCore
import LonglinkTestSupport
import Testing

/// The loop's push inbox keeps a broker's "may have missed" drop in order with the pushes around it: a push the
/// broker delivered after the drop must not reach a subscriber before the drop (it would skip the missed records,
/// and the reconnect would resume after them).
@Suite("Push inbox", .ownThreads)
struct PushInboxTests {
    private static func push(_ order: String, offset: UInt64) -> EncodedPush {
        let record = OrderChangeRecord(
            orderID: OrderFixtures.id(order),
            line: .taxi,
            fromState: nil,
            toState: BuiltInLines.created,
            fields: .none,
            position: StreamPosition(epoch: 1, offset: offset),
            timestampMillis: 1
        )
        return EncodedPush(record: record, frame: [UInt8(offset)])
    }

    @Test("a drop is taken between the pushes handed before and after it; only another thread's first hand-off asks")
    func dropKeepsItsPlace() {
        let inbox = PushInbox()
        #expect(inbox.append(fromLoop: false) { $0.append(Self.push("a", offset: 1)) })
        #expect(!inbox.appendDrop(of: [Route.order(.taxi, OrderFixtures.id("a"))], fromLoop: false))
        #expect(!inbox.append(fromLoop: false) { $0.append(Self.push("a", offset: 9)) })
        var pushes: [EncodedPush] = []
        var drops: [PushInbox.Drop] = []
        #expect(inbox.take(into: &pushes, drops: &drops))
        #expect(pushes.map(\.record.position.offset) == [1, 9])
        #expect(drops.map(\.after) == [1])
        #expect(drops.first?.routes == [Route.order(.taxi, OrderFixtures.id("a"))])
        // Taken: the next drop from another thread asks the loop again; one from the loop itself never does.
        #expect(inbox.appendDrop(of: [], fromLoop: false))
        pushes.removeAll()
        drops.removeAll()
        #expect(inbox.take(into: &pushes, drops: &drops))
        #expect(!inbox.appendDrop(of: [], fromLoop: true))
        #expect(!inbox.append(fromLoop: true) { $0.append(Self.push("b", offset: 2)) })
        pushes.removeAll()
        drops.removeAll()
        #expect(inbox.take(into: &pushes, drops: &drops))
        #expect(pushes.count == 1 && drops.count == 1 && drops[0].after == 0)
        #expect(!inbox.take(into: &pushes, drops: &drops))
    }
}
