public import LonglinkCore
public import Testing

/// What a contract check asks of a store under test: its state machines, retention limits and a clock the
/// check moves by hand (the store must take record timestamps from it).
public struct OrderStoreSetup: Sendable {
    /// The state machines (the built-in lines unless a check says otherwise).
    public var catalog: StateMachineCatalog
    /// History limits.
    public var retention: StoreRetention
    /// The store's clock.
    public var clock: ManualWallClock

    public init(
        catalog: StateMachineCatalog = .builtIn,
        retention: StoreRetention = .standard,
        clock: ManualWallClock = ManualWallClock()
    ) {
        self.catalog = catalog
        self.retention = retention
        self.clock = clock
    }
}

/// How the contract suite obtains stores, like centrifuge's `mapBrokerFactory`.
///
/// `make` returns a new, empty store for a setup (a fresh file for durable stores). `reopen`, for durable
/// stores only, opens the same data again: the suite calls `shutdown()` on the old store first and passes it so
/// the factory can find its location (e.g. cast it and read its path).
public struct OrderStoreFactory: Sendable {
    /// A name for test output (`memory`, `sqlite`).
    public var name: String
    /// A new empty store.
    public var make: @Sendable (OrderStoreSetup) throws -> any OrderStore
    /// The same data opened again after the given (already shut down) store; nil for stores that keep nothing.
    public var reopen: (@Sendable (OrderStoreSetup, any OrderStore) throws -> any OrderStore)?

    public init(
        name: String,
        make: @escaping @Sendable (OrderStoreSetup) throws -> any OrderStore,
        reopen: (@Sendable (OrderStoreSetup, any OrderStore) throws -> any OrderStore)? = nil
    ) {
        self.name = name
        self.make = make
        self.reopen = reopen
    }

    /// `MemoryOrderStore` with the setup's catalog, retention and clock.
    public static let memory = OrderStoreFactory(name: "memory") { setup in
        MemoryOrderStore(catalog: setup.catalog, retention: setup.retention, clock: setup.clock)
    }
}

/// One check of `OrderStoreContract`, runnable as a parameterized test argument:
/// `@Test(arguments: OrderStoreContract.checks) func contract(_ check: OrderStoreContractCheck) throws {
/// try check.run(factory) }`.
public struct OrderStoreContractCheck: Sendable, CustomTestStringConvertible {
    /// What the check verifies, as a sentence.
    public var name: String
    /// Runs the check against stores from `factory`; failures are recorded with `#expect`/`#require`.
    public var run: @Sendable (OrderStoreFactory) throws -> Void

    public init(_ name: String, run: @escaping @Sendable (OrderStoreFactory) throws -> Void) {
        self.name = name
        self.run = run
    }

    public var testDescription: String { name }
}

/// Small builders the checks (and other tests) share.
public enum OrderFixtures {
    /// An order id from text that is known to be valid.
    public static func id(_ text: String) -> OrderID {
        guard let id = OrderID(text) else { preconditionFailure("invalid order id \(text)") }
        return id
    }

    /// A change of a taxi order (or another line).
    public static func change(
        _ order: String,
        _ state: OrderState,
        line: BusinessLine = .taxi,
        fields: OrderFields = .none,
        key: String = ""
    ) -> OrderChange {
        OrderChange(orderID: id(order), line: line, targetState: state, fields: fields, idempotencyKey: key)
    }

    /// A full taxi lifecycle (8 changes, created … paid) with the fields each state needs.
    public static func taxiLifecycle(_ order: String) -> [OrderChange] {
        [
            change(
                order,
                BuiltInLines.created,
                fields: OrderFields(location: GeoPoint(latitudeE6: 31_230_416, longitudeE6: 121_473_701))
            ),
            change(order, BuiltInLines.dispatching),
            change(
                order,
                BuiltInLines.driverAssigned,
                fields: OrderFields(driverID: "driver-\(order)", etaSeconds: 240)
            ),
            change(order, BuiltInLines.driverArriving, fields: OrderFields(etaSeconds: 120)),
            change(order, BuiltInLines.driverArrived, fields: OrderFields(etaSeconds: 0)),
            change(order, BuiltInLines.inTrip, fields: OrderFields(payload: [1, 2, 3])),
            change(order, BuiltInLines.completed),
            change(order, BuiltInLines.paid),
        ]
    }

    /// Every retained record of an order (`nil` when the read answered `.expired`).
    public static func history(_ store: any OrderStore, _ line: BusinessLine, _ order: String) throws
        -> [OrderChangeRecord]?
    {
        switch try store.records(of: line, id(order), after: .zero, limit: 100_000) {
        case .records(let records): records
        case .expired: nil
        }
    }

    /// The error `body` throws, or nil when it succeeds.
    public static func storeError<T>(_ body: () throws(StoreError) -> T) -> StoreError? {
        do {
            _ = try body()
            return nil
        } catch {
            return error
        }
    }
}
