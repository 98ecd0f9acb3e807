public import LonglinkCore
public import Testing

/// How `ToggleStoreContract` obtains toggle stores, like `OrderStoreFactory`.
///
/// `make` returns a new, empty store (a fresh file, a fresh key prefix). `reopen`, for durable stores only, opens
/// the same data once more: a second handle, as another process or gateway node would hold it; the given store
/// may still be open (the suite says when it shut it down first).
public struct ToggleStoreFactory: Sendable {
    /// A name for test output (`memory`, `sqlite`, `redis`).
    public var name: String
    /// A new empty store.
    public var make: @Sendable () throws -> any ToggleStore
    /// The same data opened again; nil for stores that keep nothing.
    public var reopen: (@Sendable (any ToggleStore) throws -> any ToggleStore)?

    public init(
        name: String,
        make: @escaping @Sendable () throws -> any ToggleStore,
        reopen: (@Sendable (any ToggleStore) throws -> any ToggleStore)? = nil
    ) {
        self.name = name
        self.make = make
        self.reopen = reopen
    }

    /// `MemoryToggleStore`.
    public static let memory = ToggleStoreFactory(name: "memory") { MemoryToggleStore() }
}

/// One check of `ToggleStoreContract`, runnable as a parameterized test argument.
public struct ToggleStoreContractCheck: Sendable, CustomTestStringConvertible {
    /// What the check verifies, as a sentence.
    public var name: String
    /// Runs the check against stores from `factory`.
    public var run: @Sendable (ToggleStoreFactory) throws -> Void

    public init(_ name: String, run: @escaping @Sendable (ToggleStoreFactory) throws -> Void) {
        self.name = name
        self.run = run
    }

    public var testDescription: String { name }
}

/// The behaviour every `ToggleStore` must show (see the protocol's contract). Each implementation's test target
/// runs all of `checks`:
///
/// ```swift
/// @Test("keeps the ToggleStore contract", arguments: ToggleStoreContract.checks)
/// func contract(_ check: ToggleStoreContractCheck) throws { try check.run(.memory) }
/// ```
public enum ToggleStoreContract {
    /// Every check, in a stable order.
    public static let checks: [ToggleStoreContractCheck] = [
        ToggleStoreContractCheck("toggles are set with increasing offsets and listed by app", run: setAndList),
        ToggleStoreContractCheck("every kind of value round-trips, separators and all", run: valuesRoundTrip),
        ToggleStoreContractCheck("invalid toggle names are refused and nothing is stored", run: invalidNames),
        ToggleStoreContractCheck("importToggle keeps value, offset and time in this store's epoch", run: importPolicies),
        ToggleStoreContractCheck("importToggle refuses offset 0", run: importOffsetZero),
        ToggleStoreContractCheck("a shut down store refuses calls", run: closedStore),
        ToggleStoreContractCheck("a reopened durable store keeps its toggles and continues their offsets", run: durable),
        ToggleStoreContractCheck("a second handle on the same data sees every set and continues the offsets", run: sharedData),
    ]

    public static func setAndList(_ factory: ToggleStoreFactory) throws {
        let store = try factory.make()
        defer { store.shutdown() }
        #expect(try store.toggles(app: nil).isEmpty)
        #expect(try store.toggle(app: "rider", name: "new_home") == nil)
        let first = try store.setToggle(app: "rider", name: "new_home", value: .bool(true), nowMillis: 1_000)
        #expect(first.position == StreamPosition(epoch: store.epoch, offset: 1))
        #expect(first.app == "rider" && first.name == "new_home" && first.route.text == "config://rider/new_home")
        #expect(first.updatedAtMillis == 1_000 && first.value == .bool(true))
        let second = try store.setToggle(app: "rider", name: "new_home", value: .rollout(percent: 25), nowMillis: 2_000)
        #expect(second.position == StreamPosition(epoch: store.epoch, offset: 2))
        #expect(second.value == .rollout(percent: 25) && second.updatedAtMillis == 2_000)
        _ = try store.setToggle(app: "driver", name: "map.style", value: .string("night"), nowMillis: 3_000)
        _ = try store.setToggle(app: "rider", name: "a_first", value: .bool(false), nowMillis: 4_000)
        _ = try store.setToggle(app: "rider2", name: "new_home", value: .bool(true), nowMillis: 5_000)
        #expect(try store.toggles(app: "rider").map(\.name) == ["a_first", "new_home"])
        #expect(try store.toggles(app: nil).map { "\($0.app)/\($0.name)" } == ["driver/map.style", "rider/a_first", "rider/new_home", "rider2/new_home"])
        #expect(try store.toggles(app: "nobody").isEmpty)
        #expect(try store.toggle(app: "rider", name: "new_home") == second)
        #expect(try store.toggle(app: "driver", name: "map.style")?.value == .string("night"))
        #expect(try store.toggle(app: "nobody", name: "x") == nil)
        #expect(try store.toggle(app: "rider", name: "a_first")?.position.offset == 1)
    }

    public static func valuesRoundTrip(_ factory: ToggleStoreFactory) throws {
        let store = try factory.make()
        defer { store.shutdown() }
        let values: [ToggleValue] = [
            .bool(false), .bool(true), .rollout(percent: 0), .rollout(percent: 100), .string(""),
            .string("a:b:c/d 1:2"), .string("grüße, 世界"), .string("true"),
        ]
        for (index, value) in values.enumerated() {
            let name = "v\(index)"
            let set = try store.setToggle(app: "values", name: name, value: value, nowMillis: UInt64(10 + index))
            #expect(set.value == value)
            #expect(try store.toggle(app: "values", name: name) == set, "\(value)")
        }
        #expect(try store.toggles(app: "values").map(\.value) == values)
    }

    public static func invalidNames(_ factory: ToggleStoreFactory) throws {
        let store = try factory.make()
        defer { store.shutdown() }
        for (app, name) in [("Rider", "x"), ("rider", "has space"), ("", "x"), ("rider", ""), ("rider", "a/b"), (String(repeating: "a", count: 33), "x")] {
            let error = OrderFixtures.storeError { () throws(StoreError) in
                try store.setToggle(app: app, name: name, value: .bool(true), nowMillis: 1)
            }
            #expect(error?.code == .invalidField, "\(app)/\(name): \(String(describing: error))")
        }
        #expect(try store.toggles(app: nil).isEmpty)
    }

    public static func importPolicies(_ factory: ToggleStoreFactory) throws {
        let store = try factory.make()
        defer { store.shutdown() }
        let source = MemoryToggleStore(epoch: store.epoch == 77 ? 78 : 77)
        _ = try source.setToggle(app: "rider", name: "new_home", value: .bool(true), nowMillis: 1_000)
        let second = try source.setToggle(app: "rider", name: "new_home", value: .rollout(percent: 25), nowMillis: 2_000)
        let third = try source.setToggle(app: "rider", name: "new_home", value: .string("v3"), nowMillis: 3_000)
        #expect(try store.importToggle(second, policy: .refuseDifferent) == .created)
        var expected = second
        expected.position.epoch = store.epoch
        #expect(try store.toggles(app: nil) == [expected])
        #expect(try store.toggle(app: "rider", name: "new_home") == expected)
        #expect(try store.importToggle(second, policy: .refuseDifferent) == .identical)
        #expect(OrderFixtures.storeError { () throws(StoreError) in try store.importToggle(third, policy: .refuseDifferent) }?.code == .staleChange)
        #expect(try store.importToggle(third, policy: .extend) == .extended)
        #expect(try store.toggle(app: "rider", name: "new_home")?.value == .string("v3"))
        #expect(OrderFixtures.storeError { () throws(StoreError) in try store.importToggle(second, policy: .extend) }?.code == .staleChange)
        var diverged = third
        diverged.value = .bool(false)
        #expect(OrderFixtures.storeError { () throws(StoreError) in try store.importToggle(diverged, policy: .extend) }?.code == .staleChange)
        #expect(try store.toggle(app: "rider", name: "new_home")?.value == .string("v3"))
        #expect(try store.importToggle(diverged, policy: .replace) == .replaced)
        var replaced = diverged
        replaced.position.epoch = store.epoch
        #expect(try store.toggles(app: nil) == [replaced])
        // Setting it continues from the imported offset.
        #expect(try store.setToggle(app: "rider", name: "new_home", value: .bool(true), nowMillis: 4_000).position.offset == 4)
    }

    public static func importOffsetZero(_ factory: ToggleStoreFactory) throws {
        let store = try factory.make()
        defer { store.shutdown() }
        let toggle = try #require(FeatureToggle(app: "rider", name: "zero", value: .bool(true)))
        #expect(OrderFixtures.storeError { () throws(StoreError) in try store.importToggle(toggle, policy: .replace) } != nil)
        #expect(try store.toggles(app: nil).isEmpty)
    }

    public static func closedStore(_ factory: ToggleStoreFactory) throws {
        let store = try factory.make()
        let toggle = try store.setToggle(app: "rider", name: "new_home", value: .bool(true), nowMillis: 1)
        store.shutdown()
        #expect(OrderFixtures.storeError { () throws(StoreError) in try store.setToggle(app: "rider", name: "x", value: .bool(true), nowMillis: 2) } == .closed)
        #expect(OrderFixtures.storeError { () throws(StoreError) in try store.toggles(app: nil) } == .closed)
        #expect(OrderFixtures.storeError { () throws(StoreError) in try store.toggle(app: "rider", name: "new_home") } == .closed)
        #expect(OrderFixtures.storeError { () throws(StoreError) in try store.importToggle(toggle, policy: .replace) } == .closed)
    }

    public static func durable(_ factory: ToggleStoreFactory) throws {
        guard let reopen = factory.reopen else { return }
        let store = try factory.make()
        _ = try store.setToggle(app: "rider", name: "new_home", value: .bool(true), nowMillis: 1)
        let kept = try store.setToggle(app: "rider", name: "new_home", value: .string("v2"), nowMillis: 2)
        let epoch = store.epoch
        store.shutdown()
        let reopened = try reopen(store)
        defer { reopened.shutdown() }
        #expect(reopened.epoch == epoch)
        #expect(try reopened.toggles(app: nil) == [kept])
        #expect(try reopened.setToggle(app: "rider", name: "new_home", value: .bool(false), nowMillis: 3).position.offset == 3)
    }

    public static func sharedData(_ factory: ToggleStoreFactory) throws {
        guard let reopen = factory.reopen else { return }
        let one = try factory.make()
        defer { one.shutdown() }
        let two = try reopen(one)
        defer { two.shutdown() }
        #expect(one.epoch == two.epoch)
        var offsets: [UInt64] = []
        for round in 0..<4 {
            let writer = round % 2 == 0 ? one : two
            offsets.append(try writer.setToggle(app: "rider", name: "shared", value: .rollout(percent: round), nowMillis: UInt64(round)).position.offset)
        }
        #expect(offsets == [1, 2, 3, 4])
        #expect(try one.toggle(app: "rider", name: "shared")?.value == .rollout(percent: 3))
        #expect(try two.toggles(app: nil) == one.toggles(app: nil))
    }
}
