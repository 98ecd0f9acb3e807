import LonglinkCore
import LonglinkSQLite
import LonglinkStores
import LonglinkTestSupport
import Testing

@Suite("ShadowToggleStore", .ownThreads)
struct ShadowToggleStoreTests {
    @Test("two agreeing stores keep the ToggleStore contract and report nothing", arguments: ToggleStoreContract.checks)
    func contract(_ check: ToggleStoreContractCheck) throws {
        let reporter = ShadowDivergenceReporter()
        try check.run(ToggleStoreFactory(name: "shadow") {
            ShadowToggleStore(primary: MemoryToggleStore(), shadow: MemoryToggleStore(), reporter: reporter)
        })
        #expect(reporter.count == 0, "\(reporter.recent)")
    }

    @Test("the shadow holds what the primary set, and migrate --verify finds them identical")
    func faithfulCopy() throws {
        let reporter = ShadowDivergenceReporter()
        let primary = MemoryToggleStore()
        let shadow = MemoryToggleStore()
        let store = ShadowToggleStore(primary: primary, shadow: shadow, reporter: reporter)
        _ = try store.setToggle(app: "rider", name: "new_home", value: .bool(true), nowMillis: 1)
        _ = try store.setToggle(app: "rider", name: "new_home", value: .rollout(percent: 5), nowMillis: 2)
        _ = try store.toggles(app: nil)
        #expect(reporter.count == 0, "\(reporter.recent)")
        #expect(try shadow.toggle(app: "rider", name: "new_home")?.position.offset == 2)
        let check = try StoreMigration.verify(
            source: MemoryOrderStore(),
            target: MemoryOrderStore(),
            toggles: StoreMigration.Toggles(source: primary, target: shadow)
        )
        #expect(check.isClean && check.togglesChecked == 1, "\(check.differences)")
    }

    @Test("a shadow that fails or differs is reported and never fails the primary")
    func divergenceReported() throws {
        let reporter = ShadowDivergenceReporter()
        let primary = MemoryToggleStore()
        let shadow = MemoryToggleStore()
        let store = ShadowToggleStore(primary: primary, shadow: shadow, reporter: reporter)
        _ = try shadow.setToggle(app: "rider", name: "only_shadow", value: .bool(true), nowMillis: 1)
        #expect(try store.toggles(app: nil).isEmpty)
        #expect(reporter.count(of: .readDiffers) == 1)
        shadow.shutdown()
        #expect(try store.setToggle(app: "rider", name: "new_home", value: .bool(true), nowMillis: 2).position.offset == 1)
        #expect(reporter.count(of: .shadowFailed) == 1)
        #expect(reporter.recent.last?.operation == "setToggle")
    }
}
