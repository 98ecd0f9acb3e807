@testable import LonglinkCore
import Testing

@Suite("Memory store tables")
struct MemoryTableTests {
    @Test("the slot index agrees with a dictionary through 20,000 seeded inserts, updates and removals")
    func slotIndexAgreesWithDictionary() {
        var generator = SeededGenerator(seed: 7)
        var index = OrderSlotIndex()
        var reference: [OrderID: Int] = [:]
        // A small id space so removals hit present ids and probe chains wrap and shift often.
        let ids = (0..<600).map { OrderID("order-\($0)")! }
        for step in 0..<20_000 {
            let id = ids[Int.random(in: 0..<ids.count, using: &generator)]
            if Int.random(in: 0..<3, using: &generator) == 0 {
                index.remove(id)
                reference[id] = nil
            } else {
                index.set(step, for: id)
                reference[id] = step
            }
            if step % 997 == 0 {
                for id in ids { #expect(index.slot(of: id) == reference[id]) }
            }
        }
        #expect(index.count == reference.count)
        for id in ids { #expect(index.slot(of: id) == reference[id]) }
        #expect(Set(index.keys) == Set(reference.keys))
    }

    @Test("ids that differ only after their first 8 bytes, or by length, stay distinct")
    func similarIDs() {
        var index = OrderSlotIndex()
        let ids = ["a", "a-", "abcdefgh", "abcdefgh1", "abcdefgh2", "abcdefghabcdefgh", "abcdefghabcdefgi"]
            .map { OrderID($0)! }
        for (slot, id) in ids.enumerated() { index.set(slot, for: id) }
        for (slot, id) in ids.enumerated() { #expect(index.slot(of: id) == slot) }
        #expect(index.slot(of: OrderID("abcdefgh3")!) == nil)
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
