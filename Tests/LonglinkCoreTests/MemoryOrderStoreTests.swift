import LonglinkCore
import LonglinkTestSupport
import Testing

@Suite("MemoryOrderStore")
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
