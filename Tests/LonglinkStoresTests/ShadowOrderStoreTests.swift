import LonglinkCore
import LonglinkStores
import LonglinkTestSupport
import Testing

@Suite("ShadowOrderStore")
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
        let altered = SpyOrderStore(MemoryOrderStore(), counters: SpyCounters()) { change in
            guard change.orderID.rawValue == "bad", change.targetState == BuiltInLines.driverAssigned else {
                return change
            }
            var change = change
            change.fields.driverID = "someone-else"
            return change
        }
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
        // Refusals by both stores that agree are not divergences... but the failing shadow's errors differ.
        #expect(throws: StoreError.self) { try store.apply(OrderFixtures.change("p1", BuiltInLines.created)) }
        #expect(reporter.count(of: .errorDiffers) == 1)
    }
}
