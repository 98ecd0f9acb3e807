import LonglinkCore
import Testing

/// The feature-toggle part of the Store contract (kept apart from `checks` so stores that do not keep toggles
/// yet still pass the order contract): run `OrderStoreContract.toggleChecks` for every store that keeps them.
extension OrderStoreContract {
    /// Every toggle check.
    public static let toggleChecks: [OrderStoreContractCheck] = [
        OrderStoreContractCheck("toggles are set with increasing offsets and listed by app", run: togglesSetAndList),
        OrderStoreContractCheck("invalid toggle names are refused", run: togglesInvalid),
        OrderStoreContractCheck("a reopened durable store keeps its toggles", run: togglesDurable),
        OrderStoreContractCheck("importToggle keeps value, offset and time in this store's epoch", run: togglesImport),
    ]

    public static func togglesImport(_ factory: OrderStoreFactory) throws {
        let store = try make(factory)
        defer { store.shutdown() }
        #expect(store.keepsToggles)
        let source = MemoryOrderStore(epoch: 77)
        _ = try source.setToggle(app: "rider", name: "new_home", value: .bool(true), nowMillis: 1_000)
        let second = try source.setToggle(app: "rider", name: "new_home", value: .rollout(percent: 25), nowMillis: 2_000)
        let third = try source.setToggle(app: "rider", name: "new_home", value: .string("v3"), nowMillis: 3_000)
        #expect(try store.importToggle(second, policy: .refuseDifferent) == .created)
        var expected = second
        expected.position.epoch = store.epoch
        #expect(try store.toggles(app: nil) == [expected])
        #expect(try store.importToggle(second, policy: .refuseDifferent) == .identical)
        #expect(OrderFixtures.storeError { () throws(StoreError) in try store.importToggle(third, policy: .refuseDifferent) }?.code == .staleChange)
        #expect(try store.importToggle(third, policy: .extend) == .extended)
        #expect(OrderFixtures.storeError { () throws(StoreError) in try store.importToggle(second, policy: .extend) }?.code == .staleChange)
        var diverged = third
        diverged.value = .bool(false)
        #expect(OrderFixtures.storeError { () throws(StoreError) in try store.importToggle(diverged, policy: .extend) }?.code == .staleChange)
        #expect(try store.importToggle(diverged, policy: .replace) == .replaced)
        // Setting it continues from the imported offset.
        #expect(try store.setToggle(app: "rider", name: "new_home", value: .bool(true), nowMillis: 4_000).position.offset == 4)
    }

    public static func togglesSetAndList(_ factory: OrderStoreFactory) throws {
        let store = try make(factory)
        defer { store.shutdown() }
        #expect(try store.toggles(app: nil).isEmpty)
        let first = try store.setToggle(app: "rider", name: "new_home", value: .bool(true), nowMillis: 1_000)
        #expect(first.position == StreamPosition(epoch: store.epoch, offset: 1))
        #expect(first.updatedAtMillis == 1_000 && first.value == .bool(true))
        let second = try store.setToggle(app: "rider", name: "new_home", value: .rollout(percent: 25), nowMillis: 2_000)
        #expect(second.position.offset == 2 && second.value == .rollout(percent: 25))
        _ = try store.setToggle(app: "driver", name: "map.style", value: .string("night"), nowMillis: 3_000)
        _ = try store.setToggle(app: "rider", name: "a_first", value: .bool(false), nowMillis: 4_000)
        #expect(try store.toggles(app: "rider").map(\.name) == ["a_first", "new_home"])
        #expect(try store.toggles(app: nil).map(\.app) == ["driver", "rider", "rider"])
        #expect(try store.toggle(app: "rider", name: "new_home") == second)
        #expect(try store.toggle(app: "driver", name: "map.style")?.value == .string("night"))
        #expect(try store.toggle(app: "nobody", name: "x") == nil)
    }

    public static func togglesInvalid(_ factory: OrderStoreFactory) throws {
        let store = try make(factory)
        defer { store.shutdown() }
        for (app, name) in [("Rider", "x"), ("rider", "has space"), ("", "x"), ("rider", "")] {
            #expect(throws: StoreError.self) { try store.setToggle(app: app, name: name, value: .bool(true), nowMillis: 1) }
        }
        #expect(try store.toggles(app: nil).isEmpty)
    }

    public static func togglesDurable(_ factory: OrderStoreFactory) throws {
        guard let reopen = factory.reopen else { return }
        let setup = OrderStoreSetup()
        let store = try make(factory, setup)
        _ = try store.setToggle(app: "rider", name: "new_home", value: .bool(true), nowMillis: 1)
        let kept = try store.setToggle(app: "rider", name: "new_home", value: .string("v2"), nowMillis: 2)
        store.shutdown()
        let reopened = try reopen(setup, store)
        defer { reopened.shutdown() }
        #expect(try reopened.toggles(app: nil) == [kept])
        #expect(try reopened.setToggle(app: "rider", name: "new_home", value: .bool(false), nowMillis: 3).position.offset == 3)
    }
}
