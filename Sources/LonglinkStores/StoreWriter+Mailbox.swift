import Dispatch
import LonglinkCore
import Synchronization

/// The writer's queue and loop: a `Mutex`-guarded array of requests plus a semaphore to wake the writer,
/// signalled only when the writer said it was going to sleep (merged wake-ups, as NIO's `_schedule0`).
final class Mailbox: Sendable {
    private struct State {
        var queue: [WriterRequest] = []
        var sleeping = false
        var stopping = false
    }

    let configuration: StoreWriter.Configuration
    let observers: ObserverRegistry?
    let finished = DispatchSemaphore(value: 0)
    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    private let batches = Atomic<Int>(0)
    private let changes = Atomic<Int>(0)
    private let expired = Atomic<Int>(0)
    private let joined = Mutex(false)

    init(configuration: StoreWriter.Configuration, observers: ObserverRegistry?) {
        self.configuration = configuration
        self.observers = observers
    }

    var statistics: StoreWriter.Statistics {
        StoreWriter.Statistics(
            batches: batches.load(ordering: .relaxed),
            changes: changes.load(ordering: .relaxed),
            expiredOrders: expired.load(ordering: .relaxed)
        )
    }

    func post(_ request: WriterRequest) {
        let (accepted, signal) = state.withLock { state -> (Bool, Bool) in
            guard !state.stopping else { return (false, false) }
            state.queue.append(request)
            let signal = state.sleeping
            state.sleeping = false
            return (true, signal)
        }
        if !accepted { return request.fail() }
        if signal { wake.signal() }
    }

    func stop() {
        let signal = state.withLock { state -> Bool in
            state.stopping = true
            let signal = state.sleeping
            state.sleeping = false
            return signal
        }
        if signal { wake.signal() }
        // Wait for the writer thread once; later callers return at once.
        let first = joined.withLock { joined in
            defer { joined = true }
            return !joined
        }
        if first { finished.wait() }
    }

    /// The store could not be opened: refuse everything from now on.
    func markFailed() {
        state.withLock { $0.stopping = true }
        finished.signal()
    }

    /// The writer thread's loop.
    func run(_ store: any OrderStore) {
        let interval = configuration.expiryIntervalMillis
        var nextExpiry = MonotonicClock.nanoseconds() &+ interval &* 1_000_000
        while true {
            let (requests, stop) = take(untilNanos: interval == 0 ? nil : nextExpiry)
            process(requests, store)
            if stop { break }
            if interval > 0 && MonotonicClock.nanoseconds() >= nextExpiry {
                expire(store)
                nextExpiry = MonotonicClock.nanoseconds() &+ interval &* 1_000_000
            }
        }
        store.shutdown()
        finished.signal()
    }

    /// Every queued request, waiting for one (or the expiry deadline) when there is none. `stop` is true when the
    /// writer is stopping and the queue is drained.
    private func take(untilNanos deadline: UInt64?) -> ([WriterRequest], stop: Bool) {
        let taken = state.withLock { state -> ([WriterRequest], Bool)? in
            if !state.queue.isEmpty {
                var requests: [WriterRequest] = []
                swap(&requests, &state.queue)
                return (requests, false)
            }
            if state.stopping { return ([], true) }
            state.sleeping = true
            return nil
        }
        if let taken { return taken }
        if let deadline {
            let now = MonotonicClock.nanoseconds()
            let wait = deadline > now ? deadline - now : 0
            _ = wake.wait(timeout: .now() + .nanoseconds(Int(min(wait, UInt64(Int.max)))))
        } else {
            wake.wait()
        }
        return ([], false)
    }

    private func process(_ requests: [WriterRequest], _ store: any OrderStore) {
        var pending: [OrderChange] = []
        var completions: [@Sendable (Result<AppliedChange, StoreError>) -> Void] = []
        pending.reserveCapacity(min(requests.count, configuration.maxBatchSize))
        for request in requests {
            switch request {
            case .apply(let change, let completion):
                pending.append(change)
                completions.append(completion)
                if pending.count >= configuration.maxBatchSize {
                    commit(&pending, &completions, store)
                }
            case .run(let body):
                commit(&pending, &completions, store)
                body(store)
            }
        }
        commit(&pending, &completions, store)
    }

    /// One group commit: `applyBatch`, then the committed hook (the broker), then completions, then observers.
    private func commit(
        _ pending: inout [OrderChange],
        _ completions: inout [@Sendable (Result<AppliedChange, StoreError>) -> Void],
        _ store: any OrderStore
    ) {
        guard !pending.isEmpty else { return }
        var results = store.applyBatch(pending)
        if results.count != pending.count {
            configuration.logger.error("applyBatch returned \(results.count) results for \(pending.count) changes")
            results = Array(
                repeating: .failure(.storage("store returned a wrong result count", retryable: false)),
                count: pending.count
            )
        }
        batches.add(1, ordering: .relaxed)
        changes.add(pending.count, ordering: .relaxed)
        if let committed = configuration.committed {
            var records: [OrderChangeRecord] = []
            records.reserveCapacity(results.count)
            for result in results {
                if case .success(let applied) = result, !applied.deduplicated { records.append(applied.record) }
            }
            if !records.isEmpty { committed(records) }
        }
        for (completion, result) in zip(completions, results) { completion(result) }
        if let observers, observers.observerCount > 0 {
            var notes: [ContentChange] = []
            for result in results {
                guard case .success(let applied) = result, !applied.deduplicated else { continue }
                notes.append(
                    ContentChange(route: applied.record.route, record: applied.record, snapshot: applied.snapshot)
                )
            }
            observers.notify(notes)
        }
        pending.removeAll(keepingCapacity: true)
        completions.removeAll(keepingCapacity: true)
    }

    private func expire(_ store: any OrderStore) {
        do {
            let removed = try store.expire(nowMillis: configuration.clock.nowMillis())
            expired.add(removed, ordering: .relaxed)
            if removed > 0 { configuration.logger.debug("expired \(removed) orders") }
        } catch {
            configuration.logger.warning("expiry failed: \(error)")
        }
    }
}
