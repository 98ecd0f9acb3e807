public import LonglinkCore
import Synchronization

/// Feature toggles as a running gateway serves them (the admin API sets and lists them, a subscribe to a
/// `config://` route reads one): one `ToggleStore`, used only on the Store's writer thread, so toggle reads and
/// writes run off the loops, in order with the orders, and never at the same time as an order commit (a SQLite
/// toggle store shares the file with the order store). A value that was set is published to the broker and
/// announced to the Store's observers once stored, so subscribers of its route get it like any other change, on
/// every node.
///
/// Completions run on the writer thread: they must be short and must not block.
public final class ToggleService: Sendable {
    private let writer: StoreWriter
    /// Locked only by the writer thread (and by `shutdown` after the writer stopped): never contended.
    private let store: Mutex<any ToggleStore>
    private let observers: ObserverRegistry?
    private let broker: (any Broker)?
    private let clock: any WallClock
    private let logger: Logger

    /// Serves `store` over `writer`'s thread.
    /// - Parameters:
    ///   - broker: where a new value is published for the other nodes (and this one's subscribers); nil publishes
    ///     nothing.
    ///   - observers: told about each new value (the admin tap, tests).
    public init(
        store: sending any ToggleStore,
        writer: StoreWriter,
        broker: (any Broker)?,
        observers: ObserverRegistry? = nil,
        clock: any WallClock = SystemWallClock(),
        logger: Logger = .disabled
    ) {
        self.store = Mutex(store)
        self.writer = writer
        self.broker = broker
        self.observers = observers
        self.clock = clock
        self.logger = logger
    }

    /// Every toggle, or those of one app, sorted by app then name.
    public func list(app: String?, completion: @escaping @Sendable (Result<[FeatureToggle], StoreError>) -> Void) {
        run({ (store) throws(StoreError) -> [FeatureToggle] in try store.toggles(app: app) }, completion: completion)
    }

    /// One toggle and the store's epoch (what a subscribe to its route answers: see `FeatureToggle.snapshot`).
    public func read(
        app: String,
        name: String,
        completion: @escaping @Sendable (Result<(epoch: UInt32, toggle: FeatureToggle?), StoreError>) -> Void
    ) {
        run(
            { (store) throws(StoreError) -> (epoch: UInt32, toggle: FeatureToggle?) in
                (store.epoch, try store.toggle(app: app, name: name))
            },
            completion: completion
        )
    }

    /// Sets a toggle (creating it or moving it to the next offset); subscribers get the new value.
    public func set(
        app: String,
        name: String,
        value: ToggleValue,
        completion: @escaping @Sendable (Result<FeatureToggle, StoreError>) -> Void
    ) {
        let now = clock.nowMillis()
        let broker = self.broker
        let observers = self.observers
        let logger = self.logger
        run(
            { (store) throws(StoreError) -> FeatureToggle in
                try store.setToggle(app: app, name: name, value: value, nowMillis: now)
            },
            completion: { result in
                if case .success(let toggle) = result {
                    let record = toggle.record
                    do {
                        try broker?.publish(contentsOf: [record])
                    } catch {
                        logger.error("broker publish of toggle \(toggle.route) failed: \(error)")
                    }
                    observers?.notify([ContentChange(route: toggle.route, record: record, snapshot: toggle.snapshot)])
                }
                completion(result)
            }
        )
    }

    /// Sets a toggle and returns it once stored. For command-line tools and tests; never call it on the writer
    /// thread (that deadlocks).
    public func set(app: String, name: String, value: ToggleValue) async throws(StoreError) -> FeatureToggle {
        let result = await withCheckedContinuation { continuation in
            set(app: app, name: name, value: value) { continuation.resume(returning: $0) }
        }
        return try result.get()
    }

    /// Shuts the toggle store down. Call it after the writer stopped (`StoreWriter.shutdown()`).
    public func shutdown() {
        store.withLock { $0.shutdown() }
    }

    /// Runs `body` with the store on the writer thread, after everything queued before it.
    private func run<T: Sendable>(
        _ body: @escaping @Sendable (any ToggleStore) throws(StoreError) -> T,
        completion: @escaping @Sendable (Result<T, StoreError>) -> Void
    ) {
        writer.read(
            { [self] _ throws(StoreError) -> T in
                try store.withLock { (store) throws(StoreError) -> T in try body(store) }
            },
            completion: completion
        )
    }
}
