@testable import LonglinkCore
import Testing
import LonglinkTestSupport

@Suite("Memory store tables", .ownThreads)
struct MemoryTableTests {
    @Test("the slot index agrees with a dictionary through 20,000 seeded inserts, moves and removals")
    func slotIndexAgreesWithDictionary() {
        var generator = SeededGenerator(seed: 7)
        var index = OrderSlotIndex()
        // Slot i holds ids[i] while present; the reference maps each present id to its slot.
        let ids = (0..<600).map { OrderID("order-\($0)")! }
        var reference: [OrderID: Int] = [:]
        func lookup(_ id: OrderID) -> Int? { index.slot(of: id) { reference[id] == $0 } }
        for step in 0..<20_000 {
            let id = ids[Int.random(in: 0..<ids.count, using: &generator)]
            switch (reference[id], Int.random(in: 0..<3, using: &generator)) {
            case (nil, _):
                index.insert(id, at: step)
                reference[id] = step
            case (let slot?, 0):
                index.remove(id, at: slot)
                reference[id] = nil
            case (let slot?, _):
                index.move(id, from: slot, to: step)
                reference[id] = step
            }
            if step % 997 == 0 {
                for id in ids { #expect(lookup(id) == reference[id]) }
            }
        }
        #expect(index.count == reference.count)
        for id in ids { #expect(lookup(id) == reference[id]) }
    }

    @Test("a hash match is confirmed by the caller: an id whose slot holds another order is not found")
    func confirmation() {
        var index = OrderSlotIndex()
        let id = OrderID("abcdefgh1")!
        index.insert(id, at: 3)
        #expect(index.slot(of: id) { $0 == 3 } == 3)
        #expect(index.slot(of: id) { _ in false } == nil)
        #expect(index.slot(of: OrderID("abcdefgh2")!) { _ in true } == nil)
    }

    @Test("expiring a seeded half of 2,000 orders keeps every other order's snapshot and history reachable")
    func expireKeepsTheRest() throws {
        let clock = ManualWallClock()
        let store = MemoryOrderStore(
            retention: StoreRetention(terminalOrderTTLMillis: 1_000),
            epoch: 9,
            clock: clock
        )
        var generator = SeededGenerator(seed: 11)
        var finished: Set<OrderID> = []
        let ids = (0..<2_000).map { OrderID("expire-\($0)")! }
        for id in ids {
            _ = try store.apply(OrderChange(orderID: id, line: .taxi, targetState: BuiltInLines.created))
            if Bool.random(using: &generator) {
                _ = try store.apply(
                    OrderChange(
                        orderID: id,
                        line: .taxi,
                        targetState: BuiltInLines.cancelled,
                        fields: OrderFields(cancellationReason: "rider")
                    )
                )
                finished.insert(id)
            }
        }
        clock.advance(byMillis: 5_000)
        #expect(try store.expire(nowMillis: clock.nowMillis()) == finished.count)
        #expect(store.orderCount == ids.count - finished.count)
        for id in ids {
            let snapshot = try store.snapshot(of: .taxi, id)
            if finished.contains(id) {
                #expect(snapshot == nil)
            } else {
                #expect(snapshot?.orderID == id)
                #expect(snapshot?.state == BuiltInLines.created)
                #expect(try store.retainedHistory(of: .taxi, id)?.history.count == 1)
            }
        }
        // Orders applied after the removals land in fresh slots and are found too.
        for id in finished.prefix(50) {
            let applied = try store.apply(OrderChange(orderID: id, line: .taxi, targetState: BuiltInLines.created))
            #expect(applied.record.position.offset == 1)
            #expect(try store.snapshot(of: .taxi, id)?.position.offset == 1)
        }
    }
}
