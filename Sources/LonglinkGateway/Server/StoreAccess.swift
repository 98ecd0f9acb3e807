public import LonglinkCore
public import LonglinkStores

/// The commit stage as the gateway sees it: the Store's single writer (`StoreWriter`) and the lines it serves.
/// Changes go in, durable results come back through a completion on the writer's thread (or on the thread that
/// called `commitQueued()`, for queued requests on a store that commits on its caller). The gateway never touches
/// an `OrderStore` itself. A concrete type, not a seam: there is one writer.
public struct StoreAccess: Sendable {
    /// The single writer.
    public let writer: StoreWriter
    /// The lines the store serves: a subscribe to an order of another line is refused with `unknown_line` at once,
    /// instead of waiting forever for an order that can never exist.
    public let catalog: StateMachineCatalog
    /// The feature toggles a subscribe to a `config://` route reads.
    public let toggles: ToggleService

    public init(writer: StoreWriter, catalog: StateMachineCatalog, toggles: ToggleService) {
        self.writer = writer
        self.catalog = catalog
        self.toggles = toggles
    }

    /// Applies a change; `completion` runs once it is durable (or refused), on the writer's thread.
    func apply(_ change: OrderChange, completion: @escaping @Sendable (Result<AppliedChange, StoreError>) -> Void) {
        writer.apply(change, completion: completion)
    }

    /// Applies a loop's batch of publishes now, on the calling thread, when the store commits on its caller and
    /// nobody else is committing (results appended to `results`, in order); false otherwise (nothing applied).
    /// `beforeHandOff` sees the stored results before the broker gets the records.
    func applyOnCaller(
        _ changes: [OrderChange],
        appendingTo results: inout [Result<AppliedChange, StoreError>],
        beforeHandOff: (ArraySlice<Result<AppliedChange, StoreError>>) -> Void
    ) -> Bool {
        writer.applyOnCaller(changes, appendingTo: &results, beforeHandOff: beforeHandOff)
    }

    /// Queues a loop's batch of publishes as one request, committed by `commitQueued()` or the writer thread;
    /// `completion` gets their results, in order, on the committing thread.
    func applyQueued(
        contentsOf changes: [OrderChange],
        completion: @escaping @Sendable ([Result<AppliedChange, StoreError>]) -> Void
    ) {
        writer.apply(contentsOf: changes, deferred: true, completion: completion)
    }

    /// Like `readForSubscribe`, but the read may wait until the calling thread calls `commitQueued()`.
    func readForSubscribeQueued(
        _ line: BusinessLine,
        _ order: OrderID,
        since: StreamPosition?,
        limit: Int,
        completion: @escaping @Sendable (Result<SubscribeRead, StoreError>) -> Void
    ) {
        catchUp(line, order, since: since, limit: limit, deferred: true, completion: completion)
    }

    /// Commits what `applyQueued(contentsOf:completion:)` and `readForSubscribeQueued` queued (on the calling thread when the store
    /// allows it, otherwise by waking its writer). Cheap when nothing is queued.
    func commitQueued() {
        writer.commitQueued()
    }

    /// Reads what a subscribe needs, consistently with the writer: the snapshot and, when `since` is given, the
    /// records after it (at most `limit`). This is the writer's `catchUp`: snapshot and missed records in one
    /// writer-thread step.
    func readForSubscribe(
        _ line: BusinessLine,
        _ order: OrderID,
        since: StreamPosition?,
        limit: Int,
        completion: @escaping @Sendable (Result<SubscribeRead, StoreError>) -> Void
    ) {
        catchUp(line, order, since: since, limit: limit, deferred: false, completion: completion)
    }

    private func catchUp(
        _ line: BusinessLine,
        _ order: OrderID,
        since: StreamPosition?,
        limit: Int,
        deferred: Bool,
        completion: @escaping @Sendable (Result<SubscribeRead, StoreError>) -> Void
    ) {
        do {
            _ = try ChangeValidation.machine(for: line, in: catalog)
        } catch {
            return completion(.failure(error))
        }
        writer.catchUp(line, order, after: since, limit: limit, deferred: deferred) { result in
            completion(result.map { SubscribeRead(epoch: $0.epoch, snapshot: $0.snapshot, history: $0.history) })
        }
    }

    /// Reads what a subscribe to a `config://<app>/<name>` route needs: the toggle's current value as the snapshot,
    /// and, when `since` is given, `.records([])` if the client is up to date, `.records([current])` if it missed
    /// exactly the last change, `.expired` otherwise (a toggle keeps no history; the snapshot is what counts).
    func readToggleForSubscribe(
        _ route: Route,
        since: StreamPosition?,
        completion: @escaping @Sendable (Result<SubscribeRead, StoreError>) -> Void
    ) {
        toggles.read(app: route.namespace, name: route.key) { result in
            completion(
                result.map { read in
                    guard let toggle = read.toggle else {
                        return SubscribeRead(epoch: read.epoch, snapshot: nil, history: since == nil ? nil : .records([]))
                    }
                    var history: HistoryRead?
                    if let since {
                        let current = toggle.position
                        if since == current {
                            history = .records([])
                        } else if since.epoch == current.epoch && since.offset + 1 == current.offset {
                            history = .records([toggle.record])
                        } else {
                            history = .expired
                        }
                    }
                    return SubscribeRead(epoch: read.epoch, snapshot: toggle.snapshot, history: history)
                }
            )
        }
    }
}
