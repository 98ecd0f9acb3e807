import LonglinkCore
import LonglinkTestSupport
import Testing

@Suite("MemoryOrderStore", .ownThreads)
struct MemoryOrderStoreTests {
    @Test("keeps the OrderStore contract", arguments: OrderStoreContract.checks)
    func contract(_ check: OrderStoreContractCheck) throws {
        try check.run(.memory)
    }

    @Test("starts a random non-zero epoch unless given one")
    func epoch() {
        #expect(MemoryOrderStore(epoch: 42).epoch == 42)
        #expect(MemoryOrderStore().epoch != 0)
    }
}

@Suite("OrderStore defaults", .ownThreads)
struct OrderStoreDefaultTests {
    @Test(
        "a store without its own retainedHistory keeps the contract through the default",
        arguments: OrderStoreContract.checks
    )
    func contractThroughDefaults(_ check: OrderStoreContractCheck) throws {
        let factory = OrderStoreFactory(name: "spy") { setup in
            SpyOrderStore(
                MemoryOrderStore(catalog: setup.catalog, retention: setup.retention, clock: setup.clock),
                counters: SpyCounters()
            )
        }
        try check.run(factory)
    }
}
