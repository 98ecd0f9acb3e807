import Dispatch
import Foundation
public import LonglinkCore
import Synchronization

/// The single writer of order state: one dedicated thread owns the `OrderStore` (created on that thread by
/// `makeStore`, never handed out), and every apply and read goes through its queue.
///
/// Group commit: each time the writer wakes it takes every pending request. Consecutive applies (up to
/// `Configuration.maxBatchSize`) go to the store as ONE `applyBatch` (one transaction); when it returns the batch
/// is durable, and only then is each request's completion called, then the `ObserverRegistry` notified (the broker
/// listens there). Reads run in queue order, after the applies queued before them, so a read sees every change
/// whose completion came before it was queued. Expiry runs on the writer thread every
/// `Configuration.expiryIntervalMillis`.
///
/// Completions and read bodies run on the writer thread: they must be short and must not block (hop to your own
/// thread or loop to do more). `shutdown()` drains the queue, then calls `store.shutdown()`.
///
/// Queued requests (`deferred: true`) wait for `commitQueued()`, so a caller that makes many requests in a row (a
/// gateway loop, once per iteration) wakes the writer once. With `Configuration.commitsOnCaller` (for a store whose
/// commit is short and never blocks: the memory store), `commitQueued()` commits a small batch (up to 16 requests)
/// on the calling thread instead, unless another thread is committing at that moment (which then commits these
/// requests too): no thread hop at all, which is what a lightly loaded gateway's latency wants. A bigger batch means
/// the caller is loaded, and the writer thread commits it on another core. Completions, the committed hook and read
/// bodies run on whichever thread commits; the store is still used by one thread at a time, and batches still
/// commit in queue order.
public final class StoreWriter: Sendable {
    /// Tuning for the writer.
    public struct Configuration: Sendable {
        /// The most changes applied in one `applyBatch`.
        public var maxBatchSize: Int
        /// How often (ms) `expire` runs on the writer thread; 0 never.
        public var expiryIntervalMillis: UInt64
        /// The time passed to `expire`.
        public var clock: any WallClock
        /// Where expiry results and failures are logged.
        public var logger: Logger
        /// The stage that gets each batch's newly stored records (not deduplicated ones) on the committing thread,
        /// right after the batch is durable and before the completions and observers: the broker's path.
        public var committed: BrokerHandOff?
        /// Whether `commitQueued()` commits a small batch on the calling thread (when no other thread is
        /// committing) instead of waking the writer thread. Only for stores whose commit is short and never blocks
        /// (the memory store).
        public var commitsOnCaller: Bool

        public init(
            maxBatchSize: Int = 4_096,
            expiryIntervalMillis: UInt64 = 60_000,
            clock: any WallClock = SystemWallClock(),
            logger: Logger = .disabled,
            committed: BrokerHandOff? = nil,
            commitsOnCaller: Bool = false
        ) {
            self.committed = committed
            self.commitsOnCaller = commitsOnCaller
            self.maxBatchSize = max(1, maxBatchSize)
            self.expiryIntervalMillis = expiryIntervalMillis
            self.clock = clock
            self.logger = logger
        }
    }

    /// Counters for metrics and tests.
    public struct Statistics: Hashable, Sendable {
        /// `applyBatch` calls made.
        public var batches: Int
        /// Changes handed to `applyBatch` (accepted or refused).
        public var changes: Int
        /// Orders removed by periodic expiry.
        public var expiredOrders: Int
    }

    /// The store's epoch (read once at start).
    public let epoch: UInt32
    private let mailbox: Mailbox

    /// Starts the writer thread, creates the store on it with `makeStore`, and returns once the store is open
    /// (throwing `makeStore`'s error if it fails).
    /// - Parameter observers: told about every accepted (not deduplicated) change after its batch is durable.
    public init(
        observers: ObserverRegistry? = nil,
        configuration: Configuration = Configuration(),
        makeStore: @escaping @Sendable () throws(StoreError) -> any OrderStore
    ) throws(StoreError) {
        // The mailbox is made on the writer thread, holding the store that thread opened.
        let opened = Mutex<Result<(UInt32, Mailbox), StoreError>?>(nil)
        let ready = DispatchSemaphore(value: 0)
        let thread = Thread {
            switch Result(catching: { () throws(StoreError) in try makeStore() }) {
            case .failure(let error):
                opened.withLock { $0 = .failure(error) }
                ready.signal()
            case .success(let store):
                let epoch = store.epoch
                let mailbox = Mailbox(configuration: configuration, observers: observers, store: store)
                opened.withLock { $0 = .success((epoch, mailbox)) }
                ready.signal()
                mailbox.run()
            }
        }
        thread.name = "longlink-store-writer"
        thread.start()
        ready.wait()
        let result = opened.withLock { $0 } ?? .failure(.closed)
        let (epoch, mailbox) = try result.get()
        self.epoch = epoch
        self.mailbox = mailbox
    }

    /// Queues `change`; `completion` is called on the writer thread once its batch is durable (or it was refused).
    /// With `deferred`, the change waits for `commitQueued()` (or for a commit already under way).
    public func apply(
        _ change: OrderChange,
        deferred: Bool = false,
        completion: @escaping @Sendable (Result<AppliedChange, StoreError>) -> Void
    ) {
        mailbox.post(.apply(change, completion), wake: !deferred)
    }

    /// Queues `changes` as one request; `completion` gets their results, in order, on the committing thread once
    /// their batch is durable. With `deferred`, they wait for `commitQueued()` like a deferred apply.
    public func apply(
        contentsOf changes: [OrderChange],
        deferred: Bool = false,
        completion: @escaping @Sendable ([Result<AppliedChange, StoreError>]) -> Void
    ) {
        mailbox.post(.applyBatch(changes, completion), wake: !deferred)
    }

    /// Commits `changes` right now on the calling thread, after every request queued before them, and appends
    /// their results to `results` (in order): the gateway loop's path for the publishes it read in one
    /// iteration, with no closure and no hop. The committed hook and the observers run before it returns.
    /// Returns false, applying nothing, unless `Configuration.commitsOnCaller` is set, the batch is small (at most
    /// 16) and no other thread is committing: then queue them with `apply(contentsOf:deferred:completion:)`.
    /// Never call it from a completion or read body.
    /// `beforeHandOff` sees the batch's results once they are stored and before the committed hook hands the records
    /// on (a receipt watch must exist before any subscriber can acknowledge).
    public func applyOnCaller(
        _ changes: [OrderChange],
        appendingTo results: inout [Result<AppliedChange, StoreError>],
        beforeHandOff: (ArraySlice<Result<AppliedChange, StoreError>>) -> Void = { _ in }
    ) -> Bool {
        mailbox.applyOnCaller(changes, appendingTo: &results, beforeHandOff: beforeHandOff)
    }

    /// Commits the requests queued with `deferred: true`: on the calling thread with
    /// `Configuration.commitsOnCaller` (unless another thread is committing, which takes them too), otherwise by
    /// waking the writer thread. Cheap when nothing is queued. Never call it from a completion or read body.
    public func commitQueued() {
        mailbox.commitQueued()
    }

    /// Applies `change` and returns once its batch is durable.
    public func apply(_ change: OrderChange) async throws(StoreError) -> AppliedChange {
        let result = await withCheckedContinuation { continuation in
            apply(change) { continuation.resume(returning: $0) }
        }
        return try result.get()
    }

    /// Runs `body` with the store on the writer thread (after every request queued before it); `completion`
    /// gets its result there.
    public func read<T: Sendable>(
        _ body: @escaping @Sendable (any OrderStore) throws(StoreError) -> T,
        deferred: Bool = false,
        completion: @escaping @Sendable (Result<T, StoreError>) -> Void
    ) {
        mailbox.post(
            .run { store in
                guard let store else { return completion(.failure(.closed)) }
                completion(Result { () throws(StoreError) in try body(store) })
            },
            wake: !deferred
        )
    }

    /// Runs `body` with the store on the writer thread and returns its result.
    public func read<T: Sendable>(_ body: @escaping @Sendable (any OrderStore) throws(StoreError) -> T)
        async throws(StoreError) -> T
    {
        let result = await withCheckedContinuation { continuation in
            read(body) { continuation.resume(returning: $0) }
        }
        return try result.get()
    }

    /// An order's snapshot and the records after a position, read together on the writer thread.
    public struct CatchUp: Hashable, Sendable {
        /// The order's epoch at the time of the read (`OrderStore.epoch(of:_:)`; it changes when a store loses its history).
        public var epoch: UInt32
        /// The order now (nil when it does not exist or expired).
        public var snapshot: OrderSnapshot?
        /// The records after the asked position, or `.expired` when they cannot be recovered; nil when no
        /// position was asked.
        public var history: HistoryRead?
    }

    /// Reads an order's snapshot and, when `position` is given, its records after it (at most `limit`) in one
    /// step, so nothing commits in between; `completion` runs on the writer thread. This is how the gateway serves
    /// a subscribe, with or without a recovery position (`StreamPosition.zero`: the whole retained history).
    /// With `deferred`, the read waits for `commitQueued()` like a deferred apply.
    public func catchUp(
        _ line: BusinessLine,
        _ order: OrderID,
        after position: StreamPosition?,
        limit: Int,
        deferred: Bool = false,
        completion: @escaping @Sendable (Result<CatchUp, StoreError>) -> Void
    ) {
        read(
            { store throws(StoreError) in
                let snapshot = try store.snapshot(of: line, order)
                let history = try position.map { (position) throws(StoreError) in
                    try store.records(of: line, order, after: position, limit: limit)
                }
                // Read after the data: a store that noticed lost history during the reads (Redis) has its new epoch now.
                return CatchUp(epoch: store.epoch(of: line, order), snapshot: snapshot, history: history)
            },
            deferred: deferred,
            completion: completion
        )
    }

    /// Runs `body` on the writer thread and blocks the calling thread until it returns. For command-line tools
    /// and tests; never call it from the writer thread (a completion or read body): that deadlocks.
    public func readAndWait<T: Sendable>(_ body: @escaping @Sendable (any OrderStore) throws(StoreError) -> T)
        throws(StoreError) -> T
    {
        let box = Mutex<Result<T, StoreError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        read(body) { result in
            box.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return try (box.withLock { $0 } ?? .failure(.closed)).get()
    }

    /// Stops accepting requests, applies everything already queued, shuts the store down and waits for the
    /// writer thread to finish. Later requests fail with `.closed`. Safe to call more than once.
    public func shutdown() {
        mailbox.stop()
    }

    /// Batches, changes and expired orders so far.
    public var statistics: Statistics { mailbox.statistics }

    /// The most changes `applyOnCaller` commits on its caller's thread (a bigger batch goes to the writer thread).
    public static var callerBatchLimit: Int { Mailbox.callerBatchLimit }
}

/// A request to the writer thread.
enum WriterRequest: Sendable {
    case apply(OrderChange, @Sendable (Result<AppliedChange, StoreError>) -> Void)
    /// Several changes whose results go to one completion together, in order.
    case applyBatch([OrderChange], @Sendable ([Result<AppliedChange, StoreError>]) -> Void)
    /// Runs with the store, or with nil when the writer has stopped.
    case run(@Sendable ((any OrderStore)?) -> Void)

    /// How much work the request is (a batch counts its changes), for the caller-commit limit.
    var weight: Int {
        if case .applyBatch(let changes, _) = self { return changes.count }
        return 1
    }

    func fail() {
        switch self {
        case .apply(_, let completion): completion(.failure(.closed))
        case .applyBatch(let changes, let completion): completion(changes.map { _ in .failure(.closed) })
        case .run(let body): body(nil)
        }
    }
}
