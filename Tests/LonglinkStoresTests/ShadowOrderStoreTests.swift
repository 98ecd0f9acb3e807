import Foundation
import LonglinkCore
import LonglinkSQLite
import LonglinkStores
import LonglinkTestSupport
import Testing

@Suite("ShadowOrderStore", .ownThreads)
struct ShadowOrderStoreTests {
    @Test("two agreeing stores keep the contract and report nothing", arguments: OrderStoreContract.checks)
    func agreeing(_ check: OrderStoreContractCheck) throws {
        let reporter = ShadowDivergenceReporter()
        let factory = OrderStoreFactory(name: "shadow") { setup in
            ShadowOrderStore(
                primary: MemoryOrderStore(catalog: setup.catalog, retention: setup.retention, clock: setup.clock),
                shadow: MemoryOrderStore(catalog: setup.catalog, retention: setup.retention, clock: setup.clock),
                reporter: reporter
            )
        }
        try check.run(factory)
        #expect(reporter.count == 0, "\(reporter.recent)")
    }

    @Test("a planted divergence is detected and counted with its order id")
    func plantedDivergence() throws {
        let reporter = ShadowDivergenceReporter()
        let altered = SpyOrderStore(MemoryOrderStore(), counters: SpyCounters(), alterCommitted: { record in
            guard record.orderID.rawValue == "bad", record.toState == BuiltInLines.driverAssigned else { return record }
            var record = record
            record.fields.driverID = "someone-else"
            return record
        })
        let store = ShadowOrderStore(primary: MemoryOrderStore(), shadow: altered, reporter: reporter)
        for change in OrderFixtures.taxiLifecycle("good") + OrderFixtures.taxiLifecycle("bad") {
            _ = try store.apply(change)
        }
        // The altered record (offset 3) differs, and so does every later snapshot (offsets 3-8, merged fields).
        #expect(reporter.count(for: OrderFixtures.id("bad")) == 6)
        #expect(reporter.count(for: OrderFixtures.id("good")) == 0)
        #expect(reporter.count(of: .resultDiffers) == 6)
        let first = try #require(reporter.recent.first)
        #expect(first.orderID == OrderFixtures.id("bad") && first.operation == "apply")
        #expect(first.detail == "at offset 3: record: fields differ: driver_id")
        // Reads compare too: the snapshot still differs.
        #expect(try store.snapshot(of: .taxi, OrderFixtures.id("bad"))?.fields.driverID == "driver-bad")
        #expect(reporter.count(of: .readDiffers) == 1)
        _ = try store.records(
            of: .taxi,
            OrderFixtures.id("bad"),
            after: StreamPosition(epoch: store.epoch, offset: 2),
            limit: 10
        )
        #expect(reporter.count(of: .readDiffers) == 2)
        _ = try store.records(
            of: .taxi,
            OrderFixtures.id("good"),
            after: StreamPosition(epoch: store.epoch, offset: 2),
            limit: 10
        )
        #expect(reporter.count(for: OrderFixtures.id("good")) == 0)
    }

    @Test("a failing shadow never fails the primary")
    func failingShadow() throws {
        let reporter = ShadowDivergenceReporter()
        let store = ShadowOrderStore(primary: MemoryOrderStore(), shadow: FailingOrderStore(), reporter: reporter)
        for change in OrderFixtures.taxiLifecycle("p1") { _ = try store.apply(change) }
        let batch = store.applyBatch(OrderFixtures.taxiLifecycle("p2"))
        #expect(batch.allSatisfy { (try? $0.get()) != nil })
        #expect(try store.snapshot(of: .taxi, OrderFixtures.id("p1"))?.state == BuiltInLines.paid)
        #expect(try store.expire(nowMillis: 0) == 0)
        #expect(reporter.count(of: .shadowFailed) == 16 + 1 + 1)
        #expect(reporter.count(for: OrderFixtures.id("p2")) == 8)
        // A refusal by the primary is checked against the shadow's copy of the order, which cannot be read here.
        #expect(throws: StoreError.self) { try store.apply(OrderFixtures.change("p1", BuiltInLines.created)) }
        #expect(reporter.count(of: .shadowFailed) == 16 + 1 + 1 + 1)
    }

    @Test("the shadow stores the primary's records as committed: two SQLite files with skewed clocks verify identical")
    func faithfulCopy() throws {
        let directory = NSTemporaryDirectory() + "longlink-shadow-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let primaryClock = ManualWallClock()
        let shadowClock = ManualWallClock(startMillis: primaryClock.nowMillis() + 7)
        let reporter = ShadowDivergenceReporter()
        let store = ShadowOrderStore(
            primary: try SQLiteOrderStore(path: "\(directory)/a.sqlite", clock: primaryClock),
            shadow: try SQLiteOrderStore(path: "\(directory)/b.sqlite", clock: shadowClock),
            reporter: reporter
        )
        defer { store.shutdown() }
        for change in OrderFixtures.taxiLifecycle("s1") {
            primaryClock.advance(byMillis: 3)
            shadowClock.advance(byMillis: 5)
            _ = try store.apply(change)
        }
        var batch = OrderFixtures.taxiLifecycle("s2")
        batch[1].idempotencyKey = "k"
        batch.insert(batch[1], at: 2)  // a replay inside the batch
        primaryClock.advance(byMillis: 11)
        _ = store.applyBatch(batch)
        _ = try store.snapshot(of: .taxi, OrderFixtures.id("s1"))
        _ = try store.records(of: .taxi, OrderFixtures.id("s2"), after: .zero, limit: 100)
        // A refused change is checked against the shadow's copy, which agrees.
        #expect(throws: StoreError.self) { try store.apply(OrderFixtures.change("s1", BuiltInLines.created)) }
        #expect(reporter.count == 0, "\(reporter.recent)")
        let check = try StoreMigration.verify(source: store.primary, target: store.shadow)
        #expect(check.isClean && check.checked == 2, "\(check.differences)")
    }

    @Test("the comparison covers timestamps, as migrate --verify does")
    func comparesTimestamps() throws {
        let reporter = ShadowDivergenceReporter()
        let primary = MemoryOrderStore()
        _ = try primary.apply(OrderFixtures.change("t1", BuiltInLines.created))
        // The shadow's copy of t1 differs from the primary's in its creation time only.
        var copy = try #require(try primary.retainedHistory(of: .taxi, OrderFixtures.id("t1")))
        copy.snapshot.createdAtMillis -= 1
        copy.snapshot.updatedAtMillis -= 1
        copy.history[0].timestampMillis -= 1
        let other = MemoryOrderStore()
        try other.importOrder(copy.snapshot, history: copy.history)
        let planted = ShadowOrderStore(primary: primary, shadow: other, reporter: reporter)
        _ = try planted.snapshot(of: .taxi, OrderFixtures.id("t1"))
        #expect(reporter.count(of: .readDiffers) == 1, "\(reporter.recent)")
        _ = try planted.apply(OrderFixtures.change("t1", BuiltInLines.dispatching))
        #expect(reporter.count(of: .resultDiffers) == 1, "\(reporter.recent)")
        #expect(reporter.recent.last?.detail.contains("timestamps") == true, "\(reporter.recent)")
    }
}
