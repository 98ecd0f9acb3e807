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

@Suite("StoreMigration", .ownThreads)
struct StoreMigrationTests {
    @Test("copies every order with its retained history, and verify finds nothing")
    func copyAndVerify() throws {
        let source = try populatedStore()
        let target = MemoryOrderStore()
        var progress: [StoreMigration.Progress] = []
        let report = try StoreMigration.copy(from: source, to: target, pageSize: 7) { progress.append($0) }
        #expect(report.orders.created == 41 && report.orders.written == 41 && report.orders.targetOnly == 0)
        var counts = StoreMigration.Counts()
        counts.created = 41
        #expect(progress.last == StoreMigration.Progress(phase: .copy, visited: 41, total: 41, orders: counts))
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
        #expect(again.orders.written == 0 && again.orders.identical == 41)
        #expect(try StoreMigration.verify(source: source, target: target).isClean)
    }

    @Test("an interrupted copy resumes: a target holding part of the source is not a conflict")
    func resume() throws {
        let source = try populatedStore()
        let target = MemoryOrderStore()
        let first = try #require(try source.retainedHistory(of: .taxi, OrderFixtures.id("m3")))
        try target.importOrder(first.snapshot, history: first.history)
        let report = try StoreMigration.copy(from: source, to: target)
        #expect(report.orders.created == 40 && report.orders.identical == 1)
    }

    @Test("a second copy after the source moved on extends the target's earlier copies; verify then finds nothing")
    func sourceMovedOn() throws {
        let source = try populatedStore()
        let target = MemoryOrderStore()
        _ = try StoreMigration.copy(from: source, to: target)
        _ = try source.apply(OrderFixtures.taxiLifecycle("m1")[2])  // m1: 2 → 3 records
        _ = try source.apply(OrderFixtures.change("new", BuiltInLines.created))
        let behind = try StoreMigration.verify(source: source, target: target)
        #expect(behind.differences.map(\.kind).sorted { "\($0)" < "\($1)" } == [.missingInTarget, .targetBehind])
        #expect(behind.differences.contains { $0.description == "taxi/m1: the target is behind: target at offset 2 (dispatching), source at offset 3 (driver_assigned)" })
        let report = try StoreMigration.copy(from: source, to: target)
        #expect(report.orders.created == 1 && report.orders.extended == 1 && report.orders.identical == 40)
        #expect(try StoreMigration.verify(source: source, target: target).isClean)
    }

    @Test("a second copy after the source trimmed old history by age is not a conflict: the target follows")
    func sourceTrimmedHistory() throws {
        let clock = ManualWallClock()
        let source = MemoryOrderStore(retention: StoreRetention(maxHistoryAgeMillis: 10_000), clock: clock)
        for change in OrderFixtures.taxiLifecycle("old").prefix(4) { _ = try source.apply(change) }
        let target = MemoryOrderStore()
        _ = try StoreMigration.copy(from: source, to: target)
        clock.advance(byMillis: 20_000)
        _ = try source.expire(nowMillis: clock.nowMillis())
        #expect(try source.retainedHistory(of: .taxi, OrderFixtures.id("old"))?.history.count == 1)
        let check = try StoreMigration.verify(source: source, target: target)
        #expect(check.differences.map(\.description) == [
            "taxi/old: the target is behind: target at offset 4 (driver_arriving), source at offset 4 (driver_arriving); "
                + "the same history, retained from offset 1 in the target, 4 in the source"
        ])
        let report = try StoreMigration.copy(from: source, to: target)
        #expect(report.orders.extended == 1)
        #expect(try StoreMigration.verify(source: source, target: target).isClean)
    }

    @Test("toggles are copied and compared through the toggle stores, and left alone when none are given")
    func toggles() throws {
        let source = try populatedStore()
        let sourceToggles = MemoryToggleStore()
        _ = try sourceToggles.setToggle(app: "rider", name: "new_home", value: .bool(true), nowMillis: 10)
        _ = try sourceToggles.setToggle(app: "rider", name: "new_home", value: .rollout(percent: 5), nowMillis: 20)
        let target = MemoryOrderStore()
        let targetToggles = MemoryToggleStore()
        let ends = StoreMigration.Toggles(source: sourceToggles, target: targetToggles)
        let report = try StoreMigration.copy(from: source, to: target, toggles: ends)
        #expect(report.toggles?.created == 1)
        #expect(try targetToggles.toggle(app: "rider", name: "new_home")?.position == StreamPosition(epoch: targetToggles.epoch, offset: 2))
        let check = try StoreMigration.verify(source: source, target: target, toggles: ends)
        #expect(check.isClean && check.togglesChecked == 1)
        _ = try sourceToggles.setToggle(app: "rider", name: "new_home", value: .rollout(percent: 50), nowMillis: 30)
        _ = try targetToggles.setToggle(app: "driver", name: "night", value: .bool(true), nowMillis: 30)
        let again = try StoreMigration.verify(source: source, target: target, toggles: ends)
        #expect(again.differences.map(\.description) == [
            "toggle driver/night: only in the target; target has true at offset 1",
            "toggle rider/new_home: the target is behind: target has 5% at offset 2, source has 50% at offset 3",
        ])
        #expect {
            try StoreMigration.copy(from: source, to: target, toggles: ends)
        } throws: { error in
            guard case .targetNotEmpty(1, let first) = error as? StoreMigration.MigrationError else { return false }
            return first.first?.subject == .toggle(app: "driver", name: "night")
        }
        #expect(try targetToggles.toggle(app: "rider", name: "new_home")?.value == .rollout(percent: 5))  // nothing written
        let overwritten = try StoreMigration.copy(from: source, to: target, overwrite: true, toggles: ends)
        #expect(overwritten.toggles?.extended == 1 && overwritten.toggles?.targetOnly == 1)
        #expect(try StoreMigration.verify(source: source, target: target, toggles: ends).differences.map(\.description) == [
            "toggle driver/night: only in the target; target has true at offset 1"
        ])

        let ordersOnly = MemoryOrderStore()
        let untouched = MemoryToggleStore()
        let orders = try StoreMigration.copy(from: source, to: ordersOnly)
        #expect(orders.orders.created == 41 && orders.toggles == nil)
        #expect(try untouched.toggles(app: nil).isEmpty)
        #expect(try StoreMigration.verify(source: source, target: ordersOnly).isClean)
        let unequal = try StoreMigration.verify(source: source, target: ordersOnly, toggles: StoreMigration.Toggles(source: sourceToggles, target: untouched))
        #expect(unequal.missingInTarget == 1 && unequal.togglesChecked == 1)
    }

    @Test("verify names a planted difference, and orders missing on either side")
    func plantedDifference() throws {
        let source = try populatedStore()
        let target = MemoryOrderStore()
        _ = try StoreMigration.copy(from: source, to: target)
        var order = try #require(try source.retainedHistory(of: .taxi, OrderFixtures.id("m5")))
        order.snapshot.fields.etaSeconds = 999
        try target.importOrder(order.snapshot, history: order.history, policy: .replace)
        _ = try target.apply(OrderFixtures.change("extra", BuiltInLines.created))
        _ = try source.apply(OrderFixtures.change("late", BuiltInLines.created))
        let check = try StoreMigration.verify(source: source, target: target, maxReported: 10)
        #expect(check.differenceCount == 3 && check.missingInTarget == 1 && check.missingInSource == 1)
        let named = check.differences.compactMap(\.orderID?.rawValue).sorted()
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
            return count == 2 && first.compactMap(\.orderID?.rawValue).sorted() == ["m0", "mine"]
        }
        #expect(try target.orders(after: nil, limit: 100).count == 2)  // nothing written
        let report = try StoreMigration.copy(from: source, to: target, overwrite: true)
        #expect(report.orders.created == 40 && report.orders.replaced == 1 && report.orders.targetOnly == 1)
        let check = try StoreMigration.verify(source: source, target: target)
        #expect(check.differenceCount == 1 && check.missingInSource == 1)
    }
}
