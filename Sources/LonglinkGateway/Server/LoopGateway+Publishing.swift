import LonglinkCore
import LonglinkLoop
import Synchronization

/// The publishes one loop read and has not answered yet, kept on the loop (no closure, no lock per publish).
///
/// A publish waits in `changes`/`waiting` until the loop's before-sleep step commits them together. When the
/// store commits on its caller (the memory store) they are applied right there (`StoreWriter.applyOnCaller`):
/// their results land in `results` and are answered before the flush. Otherwise the batch goes to the writer
/// as one request and waits in `inFlight`; its results come back as one job, and batches are answered in the
/// order they were handed over.
struct PublishQueue {
    /// What answering one publish needs.
    struct Waiting {
        let connection: Connection
        let requestID: UInt32
        let wantsReceipts: Bool
    }

    /// This iteration's publishes, in the order they were read.
    var changes: [OrderChange] = []
    var waiting: [Waiting] = []
    /// When this iteration's first publish was read (monotonic ns: the loop's clock for the iteration).
    var startedNanos: UInt64 = 0
    /// A batch committed on this thread and its results, answered after its deliveries (capacities reused).
    var committed: [Waiting] = []
    var results: [Result<AppliedChange, StoreError>] = []
    var committedStartedNanos: UInt64 = 0
    /// Batches handed to the writer thread, oldest first, with when they were read.
    var inFlight: [(waiting: [Waiting], startedNanos: UInt64)] = []

    /// This iteration's batch was committed on this thread: its publishes wait for their answers.
    mutating func markCommitted() {
        changes.removeAllKeepingStorage()
        swap(&committed, &waiting)
        committedStartedNanos = startedNanos
    }

    /// The batch committed on this thread was answered.
    mutating func markAnswered() {
        committed.removeAllKeepingStorage()
        results.removeAllKeepingStorage()
    }
}

/// Publishing on one loop: changes go to the Store together before the loop sleeps, their answers are queued
/// before the flush.
extension LoopGateway {
    /// Queues `change` for the Store (committed before this loop sleeps, with the other publishes read in this
    /// iteration).
    func publish(_ change: OrderChange, from connection: Connection, requestID: UInt32, wantsReceipts: Bool) {
        if publishQueue.changes.isEmpty { publishQueue.startedNanos = context.now }
        publishQueue.changes.append(change)
        publishAccepted(from: connection, requestID: requestID, wantsReceipts: wantsReceipts)
    }

    /// The read path's publish: `peer` decides, and an accepted change is built straight into this iteration's
    /// queue. Returns the actions that answer a publish that was not accepted.
    func publish(_ request: PublishRequest, from connection: Connection, nowMillis: UInt64) -> [PeerAction]? {
        let wasEmpty = publishQueue.changes.isEmpty
        let requestID = request.requestID
        let wantsReceipts = request.wantsReceipts
        if let actions = connection.peer.receivePublish(request, nowMillis: nowMillis, into: &publishQueue.changes) {
            return actions
        }
        if wasEmpty { publishQueue.startedNanos = context.now }
        publishAccepted(from: connection, requestID: requestID, wantsReceipts: wantsReceipts)
        return nil
    }

    /// Queues the answer of the change just appended to `publishQueue.changes`.
    private func publishAccepted(from connection: Connection, requestID: UInt32, wantsReceipts: Bool) {
        publishQueue.waiting.append(.init(connection: connection, requestID: requestID, wantsReceipts: wantsReceipts))
        connection.pendingPublishes += 1
        storeWorkQueued = true
    }

    /// Before sleeping: commits this iteration's publishes. On this thread when the store allows it (their results
    /// then wait in `publishQueue` for `answerCommittedPublishes`), else as one request to the writer, answered by a
    /// job when its results come back.
    func commitPublishes() {
        guard !publishQueue.changes.isEmpty else { return }
        // Behind a batch still at the writer, a batch committed here would be answered before it. Receipts are
        // watched before the broker gets the records, so no subscriber (on any loop) can acknowledge one unwatched.
        let watches = Self.receiptWatches(publishQueue.waiting)
        let shared = self.shared
        let bound = self.bound
        if publishQueue.inFlight.isEmpty && publishQueue.committed.isEmpty
            && shared.store.applyOnCaller(
                publishQueue.changes,
                appendingTo: &publishQueue.results,
                beforeHandOff: { results in Self.watchReceipts(watches, results, shared: shared, publisher: bound) }
            )
        {
            publishQueue.markCommitted()
            return
        }
        var changes: [OrderChange] = []
        swap(&changes, &publishQueue.changes)
        var waiting: [PublishQueue.Waiting] = []
        swap(&waiting, &publishQueue.waiting)
        publishQueue.inFlight.append((waiting, publishQueue.startedNanos))
        // Receipts are watched on the committing thread, right after the commit's hand-off (as before the batch path).
        shared.store.applyQueued(contentsOf: changes) { results in
            Self.watchReceipts(watches, results, shared: shared, publisher: bound)
            bound.execute { $0.answerInFlight(results) }
        }
    }

    /// Answers the publishes `commitPublishes` committed on this thread (after their deliveries were queued).
    func answerCommittedPublishes() {
        guard !publishQueue.committed.isEmpty else { return }
        answer(publishQueue.committed, publishQueue.results, startedNanos: publishQueue.committedStartedNanos)
        publishQueue.markAnswered()
    }

    /// Answers the oldest batch the writer thread committed.
    func answerInFlight(_ results: [Result<AppliedChange, StoreError>]) {
        guard !publishQueue.inFlight.isEmpty else { return }
        let (waiting, started) = publishQueue.inFlight.removeFirst()
        answer(waiting, results, startedNanos: started)
    }

    /// Counts the results and queues each answer (closed connections skipped).
    private func answer(
        _ waiting: [PublishQueue.Waiting],
        _ results: [Result<AppliedChange, StoreError>],
        startedNanos: UInt64
    ) {
        let counters = shared.counters
        let elapsed = MonotonicClock.nanoseconds() &- startedNanos
        var applied = 0
        counters.storeApplyLatency.observe(elapsed, count: min(waiting.count, results.count))
        // By index over both buffers: each entry and result is borrowed where it lies (no iterator, no copies).
        waiting.withUnsafeBufferPointer { waiting in
            results.withUnsafeBufferPointer { results in
                for index in 0..<min(waiting.count, results.count) {
                    let connection = waiting[index].connection
                    // The figures an answer needs are read in place: switching over the result with its change
                    // bound copied the whole result (two retains, through the type's value witness).
                    if let accepted = results[index].acceptedAnswer {
                        applied += 1
                        guard !connection.isClosed else { continue }
                        connection.pendingPublishes -= 1
                        connection.sendPublishAccepted(
                            requestID: waiting[index].requestID,
                            position: accepted.position,
                            timestampMillis: accepted.timestampMillis,
                            deduplicated: accepted.deduplicated,
                            owner: self
                        )
                        continue
                    }
                    guard case .failure(let error) = results[index] else { continue }
                    counters.publishesRefused.add(1, ordering: .relaxed)
                    counters.recordPublishRefused(error.code)
                    if error.code == .unavailable { counters.storeErrors.add(1, ordering: .relaxed) }
                    guard !connection.isClosed else { continue }
                    connection.pendingPublishes -= 1
                    if let frame = connection.peer.publishResult(requestID: waiting[index].requestID, result: results[index]) {
                        connection.send(frame)
                    }
                }
            }
        }
        if applied > 0 { counters.publishesApplied.add(applied, ordering: .relaxed) }
    }

    /// The publishes of a batch that asked for delivery receipts: (index in the batch, connection id); empty (no
    /// allocation) when none did.
    private static func receiptWatches(_ waiting: [PublishQueue.Waiting]) -> [(Int, UInt64)] {
        waiting.indices.compactMap { waiting[$0].wantsReceipts ? ($0, waiting[$0].connection.id) : nil }
    }

    /// Watches the stored records of the publishes that asked for delivery receipts (index into `results`,
    /// connection id).
    private static func watchReceipts(
        _ watches: [(Int, UInt64)],
        _ results: some RandomAccessCollection<Result<AppliedChange, StoreError>>,
        shared: GatewayShared,
        publisher: LoopBound<LoopGateway>
    ) {
        guard !watches.isEmpty else { return }
        let now = shared.clock.nowMillis()
        for (index, connectionID) in watches {
            guard index < results.count,
                case .success(let applied) = results[results.index(results.startIndex, offsetBy: index)],
                !applied.deduplicated
            else { continue }
            shared.receipts.watch(
                applied.record.route,
                applied.record.position,
                publisher: publisher,
                connection: connectionID,
                nowMillis: now
            )
        }
    }

    /// Delivers the pushes waiting in this loop's inbox (committed here or handed over by another thread).
    func takePushes() {
        guard pushInbox.take(into: &pushBatch, drops: &dropBatch) else { return }
        // Drops (the broker may have missed records of their routes) come between the pushes handed before and
        // after them.
        var start = 0
        for drop in dropBatch {
            if drop.after > start { deliver(pushBatch[start..<drop.after]) }
            dropSubscribers(of: drop.routes)
            start = drop.after
        }
        if start < pushBatch.count { deliver(pushBatch[start...]) }
        pushBatch.removeAllKeepingStorage()
        dropBatch.removeAll(keepingCapacity: true)
    }

    func acknowledged(_ route: Route, offset: UInt64, by connection: Connection) {
        let receipts = shared.receipts.acknowledged(route, offset: offset, subscriberID: connection.clientID, nowMillis: wallMillis)
        for (gateway, connectionID, receipt) in receipts {
            gateway.execute { gateway in
                guard let publisher = gateway.connections[connectionID], !publisher.isClosed else { return }
                publisher.send(.deliveryReceipt(receipt))
            }
        }
    }
}

extension Result where Success == AppliedChange, Failure == StoreError {
    /// What the publisher's answer carries when the change was accepted; nil for a refusal.
    fileprivate var acceptedAnswer: (position: StreamPosition, timestampMillis: UInt64, deduplicated: Bool)? {
        guard case .success(let applied) = self else { return nil }
        return (applied.record.position, applied.record.timestampMillis, applied.deduplicated)
    }
}
