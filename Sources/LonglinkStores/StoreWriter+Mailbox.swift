import Dispatch
import LonglinkCore
import Synchronization

/// The writer's queue and its commit loop.
///
/// Requests sit in a `Mutex`-guarded array. Whoever holds the `processing` flag owns the store and drains the
/// queue, batch after batch, until it is empty: normally the writer thread, woken through a semaphore that is
/// signalled only when it said it was going to sleep (merged wake-ups, as NIO's `_schedule0`). With
/// `Configuration.commitsOnCaller`, a thread calling `commitQueued()` takes the flag itself when nobody holds it
/// and commits on its own thread (flat combining): a gateway loop commits the publishes it read in one iteration
/// without waking another thread. The flag is taken and released under the queue's lock, and the drainer checks
/// for new requests under that lock before releasing it, so a request is never left behind.
final class Mailbox: Sendable {
    private struct State {
        var queue: [WriterRequest] = []
        /// Changes and reads in `queue` (a batch request counts each of its changes).
        var queuedWork = 0
        /// An emptied queue array that kept its capacity: the next drain swaps it in for `queue`, so a queue that
        /// is drained one request at a time does not allocate a new array per request.
        var spare: [WriterRequest] = []
        /// The writer thread waits (or is about to wait) on `wake`.
        var sleeping = false
        /// Some thread owns the store and drains the queue.
        var processing = false
        var stopping = false

        /// The queued requests, leaving the spare array (empty, with its capacity) as the new queue.
        mutating func takeQueue() -> [WriterRequest] {
            var requests: [WriterRequest] = []
            swap(&requests, &spare)
            swap(&requests, &queue)
            queuedWork = 0
            return requests
        }
    }

    /// The store, owned by whoever holds `State.processing` (the lock itself is never contended), and the
    /// commit's scratch arrays, kept with their capacity so a commit of one change allocates none of them.
    private struct StoreSlot {
        var store: (any OrderStore)?
        /// The store after its shutdown, freed with this mailbox rather than on the writer thread as it stops: a
        /// process that exits after `serve` then leaves an in-memory store's records to the kernel.
        var retired: (any OrderStore)?
        var pending: [OrderChange] = []
        var completions: [Completion] = []
        var records: [OrderChangeRecord] = []
        var notes: [ContentChange] = []
        var results: [Result<AppliedChange, StoreError>] = []
    }

    /// Who gets the results of the pending changes, in order: one change's completion, or a batch request's.
    private enum Completion {
        case one(@Sendable (Result<AppliedChange, StoreError>) -> Void)
        case batch(count: Int, @Sendable ([Result<AppliedChange, StoreError>]) -> Void)
    }

    /// What the writer thread does next.
    private enum Step {
        case drain, expire, stop, sleep, busy
    }

    /// Batches a `commitQueued()` caller drains before handing what is left to the writer thread, so a loop that
    /// commits for everyone is not kept from its own sockets for long.
    static let callerRounds = 4
    /// A `commitQueued()` or `applyOnCaller` caller commits at most this many changes itself; a bigger batch means
    /// the caller is loaded, and the writer thread commits it on another core instead. 64 covers a loop's publishes
    /// of one iteration from a publisher window of 64 (what `longlink bench` keeps in flight; about 31 arrive per
    /// iteration): at 16 those batches went to the writer thread, a wake-up each way and the records crossing
    /// cores. Sessions 9 and 10 of issue 19 measured no difference in CPU per delivery between 16 and 64 within this
    /// machine's noise; the hop it saves is the reason.
    static let callerBatchLimit = 64

    let configuration: StoreWriter.Configuration
    let observers: ObserverRegistry?
    let finished = DispatchSemaphore(value: 0)
    private let state = Mutex(State())
    private let slot: Mutex<StoreSlot>
    private let wake = DispatchSemaphore(value: 0)
    private let batches = Atomic<Int>(0)
    private let changes = Atomic<Int>(0)
    private let expired = Atomic<Int>(0)
    private let joined = Mutex(false)

    /// A mailbox for `store` (made on the writer thread, which then calls `run()`).
    init(configuration: StoreWriter.Configuration, observers: ObserverRegistry?, store: sending any OrderStore) {
        self.configuration = configuration
        self.observers = observers
        self.slot = Mutex(StoreSlot(store: store))
    }

    var statistics: StoreWriter.Statistics {
        StoreWriter.Statistics(
            batches: batches.load(ordering: .relaxed),
            changes: changes.load(ordering: .relaxed),
            expiredOrders: expired.load(ordering: .relaxed)
        )
    }

    /// Queues a request. With `wake`, makes sure someone drains it soon (the writer thread, unless a drainer is
    /// at work and will see it); without, it waits for `commitQueued()` or the next drain.
    func post(_ request: WriterRequest, wake: Bool = true) {
        let (accepted, signal) = state.withLock { state -> (Bool, Bool) in
            guard !state.stopping else { return (false, false) }
            state.queue.append(request)
            state.queuedWork += request.weight
            guard wake, state.sleeping, !state.processing else { return (true, false) }
            state.sleeping = false
            return (true, true)
        }
        if !accepted { return request.fail() }
        if signal { self.wake.signal() }
    }

    /// Commits what was queued without a wake-up: on this thread with `commitsOnCaller` (when no other thread is
    /// draining; that one then takes these requests too), otherwise by waking the writer thread.
    func commitQueued() {
        if configuration.commitsOnCaller {
            let (claimed, signal) = state.withLock { state -> (Bool, Bool) in
                guard !state.processing, !state.queue.isEmpty else { return (false, false) }
                if state.queuedWork > Self.callerBatchLimit && state.sleeping {
                    // A big batch: the caller is busy; the writer thread commits it in parallel.
                    state.sleeping = false
                    return (false, true)
                }
                state.processing = true
                return (true, false)
            }
            if claimed { drain(rounds: Self.callerRounds) }
            if signal { wake.signal() }
        } else {
            let signal = state.withLock { state -> Bool in
                guard state.sleeping, !state.processing, !state.queue.isEmpty else { return false }
                state.sleeping = false
                return true
            }
            if signal { wake.signal() }
        }
    }

    /// Commits `changes` on this thread, after the requests queued before them, and appends their results to
    /// `results`; false (nothing applied) unless the store commits on its caller, the batch is small and no other
    /// thread is committing. The committed hook and the observers run here too, before this returns.
    func applyOnCaller(
        _ changes: [OrderChange],
        appendingTo results: inout [Result<AppliedChange, StoreError>],
        beforeHandOff: (ArraySlice<Result<AppliedChange, StoreError>>) -> Void
    ) -> Bool {
        guard configuration.commitsOnCaller, !changes.isEmpty, changes.count <= Self.callerBatchLimit else { return false }
        let (claimed, queued) = state.withLock { state -> (Bool, [WriterRequest]?) in
            guard !state.processing, !state.stopping else { return (false, nil) }
            state.processing = true
            guard !state.queue.isEmpty else { return (true, nil) }
            return (true, state.takeQueue())
        }
        guard claimed else { return false }
        slot.withLock { slot in
            guard let store = slot.store else {
                queued?.forEach { $0.fail() }
                for _ in changes { results.append(.failure(.closed)) }
                return
            }
            if let queued { process(queued, &slot) }
            let start = results.count
            apply(changes, store, appendingTo: &results)
            beforeHandOff(results[start...])
            handOff(results[start...], &slot)
            notifyObservers(results[start...], &slot)
        }
        // Releases the flag the way a drain does: what was queued meanwhile is committed or handed to the writer,
        // and the array the queued requests came in goes back as the spare.
        var drained = queued ?? []
        drained.removeAllKeepingStorage()
        drain(rounds: Self.callerRounds, spare: drained)
        return true
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

    /// Drains the queue while holding `processing` (at most `rounds` batches when given), then releases it; if
    /// requests are left (or a stop is pending) and the writer thread sleeps, wakes it to take over.
    private func drain(rounds: Int?, spare: [WriterRequest] = []) {
        var left = rounds ?? Int.max
        var drained = spare
        while true {
            let (requests, signal) = state.withLock { state -> ([WriterRequest]?, Bool) in
                // The array drained last time goes back as the spare (emptied, with its capacity).
                if drained.capacity > state.spare.capacity { swap(&drained, &state.spare) }
                if state.queue.isEmpty || left == 0 {
                    state.processing = false
                    guard state.sleeping, !state.queue.isEmpty || state.stopping else { return (nil, false) }
                    state.sleeping = false
                    return (nil, true)
                }
                return (state.takeQueue(), false)
            }
            guard var requests else {
                if signal { wake.signal() }
                return
            }
            slot.withLock { slot in
                guard slot.store != nil else { return requests.forEach { $0.fail() } }
                process(requests, &slot)
            }
            requests.removeAllKeepingStorage()
            drained = requests
            left -= 1
        }
    }

    /// The writer thread's loop: drains when woken, expires on schedule, and shuts the store down when stopping.
    func run() {
        let interval = configuration.expiryIntervalMillis
        var nextExpiry = MonotonicClock.nanoseconds() &+ interval &* 1_000_000
        while true {
            let expiryDue = interval > 0 && MonotonicClock.nanoseconds() >= nextExpiry
            let step = state.withLock { state -> Step in
                state.sleeping = false
                if state.processing {
                    // A caller is committing; it drains the queue. Come back for expiry or a stop.
                    state.sleeping = true
                    return .busy
                }
                if !state.queue.isEmpty {
                    state.processing = true
                    return .drain
                }
                if state.stopping {
                    state.processing = true
                    return .stop
                }
                if expiryDue {
                    state.processing = true
                    return .expire
                }
                state.sleeping = true
                return .sleep
            }
            switch step {
            case .drain:
                drain(rounds: nil)
            case .expire:
                slot.withLock { slot in if let store = slot.store { expire(store) } }
                nextExpiry = MonotonicClock.nanoseconds() &+ interval &* 1_000_000
                drain(rounds: nil)
            case .stop:
                slot.withLock { slot in
                    slot.store?.shutdown()
                    slot.retired = slot.store
                    slot.store = nil
                }
                finished.signal()
                return
            case .busy:
                _ = wake.wait(timeout: .now() + .milliseconds(1))
            case .sleep:
                if interval == 0 {
                    wake.wait()
                } else {
                    let now = MonotonicClock.nanoseconds()
                    let wait = nextExpiry > now ? nextExpiry - now : 0
                    _ = wake.wait(timeout: .now() + .nanoseconds(Int(min(wait, UInt64(Int.max)))))
                }
            }
        }
    }

    private func process(_ requests: [WriterRequest], _ slot: inout StoreSlot) {
        guard let store = slot.store else { return }
        for request in requests {
            switch request {
            case .apply(let change, let completion):
                slot.pending.append(change)
                slot.completions.append(.one(completion))
                if slot.pending.count >= configuration.maxBatchSize {
                    commit(&slot, store)
                }
            case .applyBatch(let changes, let completion):
                if slot.pending.count + changes.count > configuration.maxBatchSize { commit(&slot, store) }
                slot.pending.append(contentsOf: changes)
                slot.completions.append(.batch(count: changes.count, completion))
                if slot.pending.count >= configuration.maxBatchSize {
                    commit(&slot, store)
                }
            case .run(let body):
                commit(&slot, store)
                body(store)
            }
        }
        commit(&slot, store)
    }

    /// One group commit: `applyBatch`, then the committed hook (the broker), then completions, then observers.
    /// The results array is the slot's, kept with its capacity between commits.
    private func commit(_ slot: inout StoreSlot, _ store: any OrderStore) {
        guard !slot.pending.isEmpty else { return }
        var results: [Result<AppliedChange, StoreError>] = []
        swap(&results, &slot.results)
        apply(slot.pending, store, appendingTo: &results)
        handOff(results[...], &slot)
        var index = 0
        for completion in slot.completions {
            switch completion {
            case .one(let completion):
                completion(results[index])
                index += 1
            case .batch(let count, let completion):
                completion(Array(results[index..<(index + count)]))
                index += count
            }
        }
        notifyObservers(results[...], &slot)
        slot.pending.removeAllKeepingStorage()
        slot.completions.removeAllKeepingStorage()
        results.removeAllKeepingStorage()
        swap(&results, &slot.results)
    }

    /// `applyBatch`, appending exactly one result per change to `results`: a store that returns another count is
    /// logged, and its results are replaced by failures.
    private func apply(
        _ changes: [OrderChange],
        _ store: any OrderStore,
        appendingTo results: inout [Result<AppliedChange, StoreError>]
    ) {
        let start = results.count
        store.applyBatch(changes, appendingTo: &results)
        guard results.count - start != changes.count else { return }
        configuration.logger.error("applyBatch returned \(results.count - start) results for \(changes.count) changes")
        results.removeSubrange(start...)
        results.append(
            contentsOf: repeatElement(.failure(.storage("store returned a wrong result count", retryable: false)), count: changes.count)
        )
    }

    /// What follows every commit, before the results are answered: the statistics and the committed hook (the
    /// broker: the newly stored records, not deduplicated ones).
    private func handOff(_ results: ArraySlice<Result<AppliedChange, StoreError>>, _ slot: inout StoreSlot) {
        batches.add(1, ordering: .relaxed)
        changes.add(results.count, ordering: .relaxed)
        if let committed = configuration.committed {
            // By index: an iterator hands out a copy of each result (through the type's value witness).
            for index in results.indices {
                if let record = results[index].freshRecord { slot.records.append(record) }
            }
            if !slot.records.isEmpty { committed.hand(slot.records) }
            slot.records.removeAllKeepingStorage()
        }
    }

    /// After the results: the observers, told of the newly stored records with their snapshots.
    private func notifyObservers(_ results: ArraySlice<Result<AppliedChange, StoreError>>, _ slot: inout StoreSlot) {
        if let observers, observers.observerCount > 0 {
            for result in results {
                guard case .success(let applied) = result, !applied.deduplicated else { continue }
                slot.notes.append(
                    ContentChange(route: applied.record.route, record: applied.record, snapshot: applied.snapshot)
                )
            }
            observers.notify(slot.notes)
            slot.notes.removeAllKeepingStorage()
        }
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

extension Result where Success == AppliedChange, Failure == StoreError {
    /// The record a commit stored; nil for a refusal or a deduplicated change.
    fileprivate var freshRecord: OrderChangeRecord? {
        guard case .success(let applied) = self, !applied.deduplicated else { return nil }
        return applied.record
    }
}
