import LonglinkCore
import LonglinkStores
import LonglinkTestSupport
import Testing

/// A memory store with `orders` taxi orders at various stages, some with trimmed history.
func populatedStore(orders: Int = 40, retention: StoreRetention = StoreRetention(maxRecordsPerOrder: 5)) throws
    -> MemoryOrderStore
{
    let store = MemoryOrderStore(retention: retention)
    for i in 0..<orders {
        var lifecycle = OrderFixtures.taxiLifecycle("m\(i)")
        lifecycle[1].idempotencyKey = "dispatch-\(i)"
        for change in lifecycle.prefix(1 + i % 8) { _ = try store.apply(change) }
    }
    _ = try store.apply(OrderFixtures.change("e1", BuiltInLines.created, line: .express))
    return store
}

@Suite("StoreMigration")
struct StoreMigrationTests {
    @Test("copies every order with its retained history, and verify finds nothing")
    func copyAndVerify() throws {
        let source = try populatedStore()
        let target = MemoryOrderStore()
        var progress: [StoreMigration.Progress] = []
        let report = try StoreMigration.copy(from: source, to: target, pageSize: 7) { progress.append($0) }
        #expect(report.copied == 41 && report.skipped == 0 && report.replaced == 0 && report.targetOnly == 0)
        #expect(progress.last == StoreMigration.Progress(copied: 41, skipped: 0, visited: 41, total: 41))
        #expect(progress.count == 6)
        let check = try StoreMigration.verify(source: source, target: target)
        #expect(check.isClean && check.checked == 41)
        // Trimmed history came along: order m7 has 8 records, 5 retained.
        #expect(
            try target.retainedHistory(of: .taxi, OrderFixtures.id("m7"))?.history.map(\.position.offset) == [
                4, 5, 6, 7, 8,
            ]
        )
        // The copy continues where the source stood, idempotency keys included.
        var next = OrderFixtures.taxiLifecycle("m1")
        next[1].idempotencyKey = "dispatch-1"
        #expect(try target.apply(next[1]).deduplicated)
        #expect(try target.apply(next[2]).record.position.offset == 3)
    }

    @Test("running a copy twice changes nothing the second time")
    func twice() throws {
        let source = try populatedStore()
        let target = MemoryOrderStore()
        _ = try StoreMigration.copy(from: source, to: target)
        let again = try StoreMigration.copy(from: source, to: target)
        #expect(again.copied == 0 && again.skipped == 41)
        #expect(try StoreMigration.verify(source: source, target: target).isClean)
    }

    @Test("an interrupted copy resumes: a target holding part of the source is not a conflict")
    func resume() throws {
        let source = try populatedStore()
        let target = MemoryOrderStore()
        let first = try #require(try source.retainedHistory(of: .taxi, OrderFixtures.id("m3")))
        try target.importOrder(first.snapshot, history: first.history)
        let report = try StoreMigration.copy(from: source, to: target)
        #expect(report.copied == 40 && report.skipped == 1)
    }

    @Test("verify names a planted difference, and orders missing on either side")
    func plantedDifference() throws {
        let source = try populatedStore()
        let target = MemoryOrderStore()
        _ = try StoreMigration.copy(from: source, to: target)
        var order = try #require(try source.retainedHistory(of: .taxi, OrderFixtures.id("m5")))
        order.snapshot.fields.etaSeconds = 999
        try target.importOrder(order.snapshot, history: order.history, replace: true)
        _ = try target.apply(OrderFixtures.change("extra", BuiltInLines.created))
        _ = try source.apply(OrderFixtures.change("late", BuiltInLines.created))
        let check = try StoreMigration.verify(source: source, target: target, maxReported: 10)
        #expect(check.differenceCount == 3 && check.missingInTarget == 1 && check.missingInSource == 1)
        let named = check.differences.map(\.orderID.rawValue).sorted()
        #expect(named == ["extra", "late", "m5"])
        let limited = try StoreMigration.verify(source: source, target: target, maxReported: 1)
        #expect(limited.differences.count == 1 && limited.differenceCount == 3)
    }

    @Test("a target holding different data is refused unless overwriting")
    func refusesDifferentTarget() throws {
        let source = try populatedStore()
        let target = MemoryOrderStore()
        _ = try target.apply(OrderFixtures.change("m0", BuiltInLines.created, fields: OrderFields(driverID: "other")))
        _ = try target.apply(OrderFixtures.change("mine", BuiltInLines.created))
        #expect {
            try StoreMigration.copy(from: source, to: target)
        } throws: { error in
            guard case .targetNotEmpty(let count, let first) = error as? StoreMigration.MigrationError else {
                return false
            }
            return count == 2 && first.map(\.orderID.rawValue).sorted() == ["m0", "mine"]
        }
        #expect(try target.orders(after: nil, limit: 100).count == 2)  // nothing written
        let report = try StoreMigration.copy(from: source, to: target, overwrite: true)
        #expect(report.copied == 41 && report.replaced == 1 && report.targetOnly == 1)
        let check = try StoreMigration.verify(source: source, target: target)
        #expect(check.differenceCount == 1 && check.missingInSource == 1)
    }
}
