public import LonglinkCore

/// The Store's single writer as the gateway sees it: changes go in, durable results come back through a
/// completion on the writer's thread (or on the thread that called `commitQueued()`, for queued requests on a
/// store that commits on its caller). The gateway never touches an `OrderStore` itself; the composition root
/// (`longlink serve`) adapts the real `StoreWriter` to this seam.
public protocol StoreAccess: Sendable {
    /// Applies a change; `completion` runs once it is durable (or refused), on the writer's thread.
    func apply(_ change: OrderChange, completion: @escaping @Sendable (Result<AppliedChange, StoreError>) -> Void)

    /// Reads what a subscribe needs, consistently with the writer: the snapshot and, when `since` is given, the
    /// records after it (at most `limit`).
    func readForSubscribe(
        _ line: BusinessLine,
        _ order: OrderID,
        since: StreamPosition?,
        limit: Int,
        completion: @escaping @Sendable (Result<SubscribeRead, StoreError>) -> Void
    )

    /// Reads what a subscribe to a `config://<app>/<name>` route needs: the toggle's current value as the snapshot,
    /// and, when `since` is given, `.records([])` if the client is up to date, `.records([current])` if it missed
    /// exactly the last change, `.expired` otherwise (a toggle keeps no history; the snapshot is what counts).
    func readToggleForSubscribe(
        _ route: Route,
        since: StreamPosition?,
        completion: @escaping @Sendable (Result<SubscribeRead, StoreError>) -> Void
    )

    /// Like `apply`, but the request may wait until the calling thread calls `commitQueued()`: a loop queues the
    /// changes it reads in one iteration and commits them together before it sleeps.
    func applyQueued(_ change: OrderChange, completion: @escaping @Sendable (Result<AppliedChange, StoreError>) -> Void)

    /// Like `readForSubscribe`, but the read may wait until the calling thread calls `commitQueued()`.
    func readForSubscribeQueued(
        _ line: BusinessLine,
        _ order: OrderID,
        since: StreamPosition?,
        limit: Int,
        completion: @escaping @Sendable (Result<SubscribeRead, StoreError>) -> Void
    )

    /// Commits what `applyQueued` and `readForSubscribeQueued` queued (on the calling thread when the store
    /// allows it, otherwise by waking its writer). Cheap when nothing is queued.
    func commitQueued()
}

extension StoreAccess {
    /// Applies at once (`apply`).
    public func applyQueued(
        _ change: OrderChange,
        completion: @escaping @Sendable (Result<AppliedChange, StoreError>) -> Void
    ) {
        apply(change, completion: completion)
    }

    /// Reads at once (`readForSubscribe`).
    public func readForSubscribeQueued(
        _ line: BusinessLine,
        _ order: OrderID,
        since: StreamPosition?,
        limit: Int,
        completion: @escaping @Sendable (Result<SubscribeRead, StoreError>) -> Void
    ) {
        readForSubscribe(line, order, since: since, limit: limit, completion: completion)
    }

    /// Nothing is queued: does nothing.
    public func commitQueued() {}

    /// A Store without toggles: every config route is empty.
    public func readToggleForSubscribe(
        _ route: Route,
        since: StreamPosition?,
        completion: @escaping @Sendable (Result<SubscribeRead, StoreError>) -> Void
    ) {
        completion(.success(SubscribeRead(epoch: 0, snapshot: nil, history: nil)))
    }
}
