public import LonglinkCore
import LonglinkLoop
import Synchronization

/// The library apps link: one persistent connection to a Longlink gateway, kept alive across network changes.
///
/// - Subscribe to routes and observe them three ways over the one `contentDidChange` protocol: a delegate
///   (`observe(_:delegate:)`), a closure (`observe(_:_:)`) or an `AsyncSequence` (`changes(of:)`). The current
///   snapshot is delivered first (`kind == .snapshot`), then every change in order, each once.
/// - Reconnects by itself with exponential backoff and full jitter, resubscribes from the last positions, and
///   delivers exactly what was missed (or a `.resync` snapshot when history was lost). Tell it when the app goes
///   to the background (`setApplicationState`) and it reconnects and probes less eagerly.
/// - Backends publish with `publish(_:)`: the idempotency key is set for you and retries reuse it.
///
/// The connection runs on its own event-loop thread; observers are called on the library's notifier thread.
public final class LonglinkClient: Sendable {
    let shared: ClientShared
    private let group: EventLoopGroup
    var loop: EventLoop { group.loops[0] }

    /// Creates a client and starts connecting. Throws `ClientTLSError` when the TLS settings cannot be used (an
    /// unreadable CA file, for instance), `IOError` when the client's thread cannot start.
    public init(configuration: ClientConfiguration, logger: Logger = .disabled) throws {
        var configuration = configuration
        if let tls = configuration.tls { configuration.transport = try tls.makeTransportFactory() }
        let shared = ClientShared(configuration: configuration, logger: logger)
        self.shared = shared
        self.group = try EventLoopGroup(numberOfThreads: 1, backend: configuration.selectorBackend) { context in
            ClientDriver(context: context, shared: shared).connect()
        }
    }

    deinit { close() }

    // MARK: State

    /// The connection state now: connecting, connected, waiting to retry (with the delay and the reason), or
    /// stopped (with the reason). A token the server refused stops the client (it is not retried); `updateToken`
    /// before the refusal lets the next attempt use the new one.
    public var state: ConnectionState { shared.currentState }

    /// Every state change from now on (starting with the current state).
    public func stateChanges() -> AsyncStream<ConnectionState> { shared.stateChanges() }

    /// Waits until connected. Throws `.connectionFailed(reason)` when the client stops (a terminal failure: refused
    /// token, refused certificate, ...), `.closed` when the app closed it, `.timeout` after `timeout`. With
    /// `failingFast`, the first failed attempt throws its reason at once instead of waiting through the retries
    /// (command-line tools: "connection refused" now, not a timeout later).
    public func waitUntilConnected(timeout: Duration = .seconds(10), failingFast: Bool = false) async throws(ClientError) {
        let states = shared.stateChanges()
        let outcome = await withTaskGroup(of: Result<Void, ClientError>?.self) { group in
            group.addTask {
                for await state in states {
                    switch state {
                    case .connected: return .success(())
                    case .stopped(let reason): return .failure(reason.map { .connectionFailed($0) } ?? .closed)
                    case .waitingToRetry(_, _, let reason) where failingFast: return .failure(.connectionFailed(reason))
                    case .idle, .connecting, .waitingToRetry: continue
                    }
                }
                return Task.isCancelled ? nil : .failure(.closed)
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? .failure(.timeout)
        }
        try outcome.get()
    }

    // MARK: Subscribing and observing

    /// Subscribes to `route` (kept across reconnects until `unsubscribe`).
    public func subscribe(_ route: Route) {
        loop.execute { context in context.attachment(ClientDriver.self)?.want(route) }
    }

    /// Ends the subscription to `route`.
    public func unsubscribe(_ route: Route) {
        loop.execute { context in context.attachment(ClientDriver.self)?.unwant(route) }
    }

    /// Subscribes and tells `delegate` (held weakly) about every change on `route`.
    public func observe(_ route: Route, delegate: any ContentObserver) -> ObservationToken {
        let token = shared.observers.observe(RoutePattern(subscription: route), delegate: delegate)
        subscribe(route)
        return token
    }

    /// Subscribes and calls `block` for every change on `route` until the token is cancelled.
    public func observe(_ route: Route, _ block: @escaping @Sendable (ContentChange) -> Void) -> ObservationToken {
        let token = shared.observers.observe(RoutePattern(subscription: route), block)
        subscribe(route)
        return token
    }

    /// Subscribes and returns the changes on `route` as an async sequence.
    public func changes(of route: Route) -> AsyncStream<ContentChange> {
        let stream = shared.observers.changes(RoutePattern(subscription: route))
        subscribe(route)
        return stream
    }

    /// The last snapshot the client knows of `route` is not kept here; observers receive it. This waits until
    /// every notification so far reached the observers (tests, orderly shutdown).
    public func waitForObservers() { shared.observers.waitUntilDelivered() }

    // MARK: Publishing

    /// Publishes an order change and returns once the Store made it durable. The idempotency key is generated
    /// when `change.idempotencyKey` is empty; retries after a lost connection reuse it, so the change is applied
    /// at most once. Throws `.refused` with the typed error (illegal transition, idempotency conflict, ...),
    /// `.timeout`, or `.connectionFailed` when the client stopped (e.g. the token was refused).
    public func publish(_ change: OrderChange, wantsReceipts: Bool = false) async throws(ClientError) -> PublishReceipt {
        var key = change.idempotencyKey
        if key.isEmpty { key = Self.makeIdempotencyKey() }
        let request = PublishRequest(
            requestID: 0,
            orderID: change.orderID.rawValue,
            line: change.line.name,
            targetState: change.targetState.name,
            fields: change.fields,
            idempotencyKey: key,
            wantsReceipts: wantsReceipts
        )
        let timeout = shared.configuration.withLock { $0.publishTimeout }
        let result: Result<PublishReceipt, ClientError> = await withCheckedContinuation { continuation in
            let posted = loop.execute { context in
                guard let driver = context.attachment(ClientDriver.self) else {
                    continuation.resume(returning: .failure(.closed))
                    return
                }
                driver.publish(request, timeout: timeout) { continuation.resume(returning: $0) }
            }
            if !posted { continuation.resume(returning: .failure(.closed)) }
        }
        return try result.get()
    }

    /// Reads a route's current snapshot and its retained history (oldest first) without staying subscribed.
    /// `recovered` is false when the history was longer than the server sends at once.
    public func history(of route: Route) async throws(ClientError) -> Subscribed {
        let result: Result<Subscribed, ClientError> = await withCheckedContinuation { continuation in
            let posted = loop.execute { context in
                guard let driver = context.attachment(ClientDriver.self) else {
                    continuation.resume(returning: .failure(.closed))
                    return
                }
                driver.history(of: route) { continuation.resume(returning: $0) }
            }
            if !posted { continuation.resume(returning: .failure(.closed)) }
        }
        return try result.get()
    }

    /// Delivery receipts for publishes made with `wantsReceipts: true`.
    public func receipts() -> AsyncStream<DeliveryReceipt> { shared.receipts() }

    // MARK: App life

    /// The heartbeat: the ping interval in use and, with `ClientConfiguration.heartbeat`, what was learned.
    public var heartbeat: HeartbeatStatus { shared.heartbeat.withLock { $0 } }

    /// The device moved to another network (named as in `HeartbeatLearning.networkName`): heartbeat learning
    /// continues from what the store holds for that network.
    public func setNetwork(_ networkName: String) {
        shared.configuration.withLock { $0.heartbeat?.networkName = networkName }
        loop.execute { context in context.attachment(ClientDriver.self)?.networkChanged() }
    }

    /// The app moved to the foreground or background; reconnect and probe timings follow.
    public func setApplicationState(_ state: ApplicationState) {
        shared.configuration.withLock { $0.applicationState = state }
        loop.execute { context in context.attachment(ClientDriver.self)?.applicationStateChanged() }
    }

    /// Replaces the token (sent as `refresh` when connected, used for later reconnects).
    public func updateToken(_ token: String) {
        shared.configuration.withLock { $0.token = token }
        loop.execute { context in context.attachment(ClientDriver.self)?.setToken(token) }
    }

    /// Called for server errors not tied to a publish (e.g. a refused subscribe).
    public func onError(_ handler: @escaping @Sendable (ErrorFrame) -> Void) { shared.onError(handler) }

    /// Called when the server refuses a subscribe (the token does not cover the route, an unknown business line,
    /// too many subscriptions, ...), with the route and the typed error. The route is dropped: it is not retried.
    public func onSubscriptionRefused(_ handler: @escaping @Sendable (Route, ErrorFrame) -> Void) {
        shared.onSubscriptionRefused(handler)
    }

    /// Called when the server answered a subscribe on the current connection (after every connect and reconnect):
    /// pushes for the route flow from then on. `recovered` is true when the client resumed from its last position
    /// with nothing missed; false for a first subscribe, a live-only line-wide one (`order://taxi/*`), or a gap too
    /// long to replay (the route's observers then got a `resync` snapshot).
    public func onSubscribed(_ handler: @escaping @Sendable (_ route: Route, _ recovered: Bool) -> Void) {
        shared.onSubscribed(handler)
    }

    /// Called when the token is about to expire; answer with `updateToken`.
    public func onTokenExpiring(_ handler: @escaping @Sendable (TokenExpiring) -> Void) { shared.onTokenExpiring(handler) }

    /// Cuts the current connection as a network failure would (no close handshake), then reconnects and
    /// resumes as usual. For tests and chaos drills.
    public func simulateNetworkLoss() {
        loop.execute { context in context.attachment(ClientDriver.self)?.connectionLost(.connectionLost("simulated network loss")) }
    }

    /// Closes the connection and stops the client's thread (the state becomes `.stopped(nil)`). Pending publishes
    /// fail with `.closed`.
    public func close() {
        loop.execute { context in
            context.attachment(ClientDriver.self)?.shutdown()
        }
        group.shutdownGracefully()
        shared.finish()
    }

    /// A random 128-bit key as 32 hex characters.
    static func makeIdempotencyKey() -> String {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next() as UInt64
        let low = generator.next() as UInt64
        let hex = String(high, radix: 16) + String(low, radix: 16)
        return String(repeating: "0", count: max(0, 32 - hex.count)) + hex
    }
}
