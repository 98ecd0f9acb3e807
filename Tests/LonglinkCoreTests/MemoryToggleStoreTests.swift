import LonglinkCore
import LonglinkTestSupport
import Testing

@Suite("MemoryToggleStore", .ownThreads)
struct MemoryToggleStoreTests {
    @Test("keeps the ToggleStore contract", arguments: ToggleStoreContract.checks)
    func contract(_ check: ToggleStoreContractCheck) throws {
        try check.run(.memory)
    }

    @Test("starts a random non-zero epoch unless given one")
    func epoch() {
        #expect(MemoryToggleStore(epoch: 42).epoch == 42)
        #expect(MemoryToggleStore().epoch != 0)
    }

    @Test("a toggle travels as a record and a snapshot on its config:// route")
    func wireForm() throws {
        let toggle = try #require(
            FeatureToggle(app: "rider", name: "new_home", value: .rollout(percent: 25), position: StreamPosition(epoch: 3, offset: 2), updatedAtMillis: 9)
        )
        #expect(toggle.record.route == toggle.route && toggle.snapshot.route == toggle.route)
        #expect(toggle.record.kind == .config && toggle.record.fromState == FeatureToggle.setState)
        #expect(toggle.record.line.name == "rider" && toggle.record.orderID.rawValue == "new_home")
        #expect(FeatureToggle(route: toggle.route, fields: toggle.snapshot.fields, position: toggle.position, updatedAtMillis: 9) == toggle)
        #expect(FeatureToggle(route: .order(.taxi, OrderFixtures.id("1")), fields: toggle.snapshot.fields, position: .zero, updatedAtMillis: 0) == nil)
    }
}
