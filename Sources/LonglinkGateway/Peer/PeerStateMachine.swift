public import LonglinkCore

/// The protocol life of one connection, without I/O: frames and timer ticks in, `PeerAction`s out.
///
///     accepted ──transportReady──▶ handshake ──connect──▶ active ──drain──▶ draining ──▶ closed
///         │                            │                     │
///         └────────────── close (timeout, violation, error) ─┴──────────────────────────▶ closed
///
/// Every transition is explicit; an input that makes no sense in the current phase is either a protocol
/// violation by the peer (answered with an error frame and, where fatal, a numbered disconnect) or a
/// programming error (`preconditionFailure`). Because it is a plain value, tests and the fuzzer drive it
/// directly with decoded frames.
public struct PeerStateMachine {
    /// Where the connection is in its life.
    public enum Phase: Hashable, Sendable {
        /// Accepted; the transport (e.g. TLS) is still setting up.
        case accepted
        /// Waiting for `connect`.
        case handshake
        /// Connected and authenticated.
        case active
        /// A `shutdown` disconnect was queued; flushing before the close.
        case draining
        /// Closed; no further input is accepted.
        case closed
    }

    /// One subscription's delivery state.
    /// (The 4-byte fields follow the 8-byte ones: 25 bytes, so the inline first entry of `SubscriptionTable`
    /// leaves room for the peer's small fields after it.)
    struct Subscription {
        /// The last offset delivered (or covered by the snapshot); pushes at or below it are duplicates.
        var lastOffset: UInt64
        /// Records that arrived while the snapshot read was in flight; nil once active.
        var held: [OrderChangeRecord]?
        /// The epoch of `lastOffset`.
        var epoch: UInt32
        /// The request that opened it.
        var requestID: UInt32
        /// Join/leave events were asked for (`subscribe … presence_events`).
        var presenceEvents = false
    }

    /// Publish token bucket: tokens now, and when it was last refilled (wall ms). A class so that peers that never
    /// publish do not carry it; copied before a change when another copy of the peer shares it, so the peer stays
    /// a value.
    private final class PublishBucket {
        var tokens: Double
        var refilledMillis: UInt64

        init(tokens: Double, refilledMillis: UInt64) {
            self.tokens = tokens
            self.refilledMillis = refilledMillis
        }
    }

    // The stored properties are ordered so the small ones fill the padding after the larger ones (184 bytes
    // instead of 232): every connection holds a peer, and idle memory per connection is a budget (issue 19).

    /// The server-side id of this connection.
    public let clientID: String
    /// Who is connected, once `connect` succeeded.
    public private(set) var principal: Principal?
    /// The current phase.
    public private(set) var phase: Phase = .accepted
    private var warnedTokenExpiry = false
    private var violations: UInt32 = 0
    /// Client software name and version from `connect`.
    public private(set) var clientName = ""
    private var subscriptions = SubscriptionTable<Subscription>()
    private var storedPingIntervalMillis: UInt32
    /// When the accept happened (in `accepted` and `handshake`: the handshake timeout counts from it), then when
    /// the current token was accepted (connect or refresh: a token is warned about at most half its remaining
    /// life before it expires, so a refresh with a short-lived token is not warned about again at once).
    private var acceptedAtMillis: UInt64
    private var lastInboundMillis: UInt64
    private var lastPingMillis: UInt64
    /// The publish token bucket, made at the first publish: most peers never publish, and keep 8 bytes for it.
    private var publishBucket: PublishBucket?
    private let context: PeerContext
    private var settings: PeerSettings { context.settings }
    /// This connection's ping interval: the default, or what the client asked for within the bounds (stored in 32
    /// bits, as the `connected` frame carries it).
    public private(set) var pingIntervalMillis: UInt64 {
        get { UInt64(storedPingIntervalMillis) }
        set { storedPingIntervalMillis = UInt32(clamping: newValue) }
    }
    private var authorizer: any Authorizer { context.authorizer }

    /// A peer for a connection accepted at `nowMillis`.
    public init(clientID: String, settings: PeerSettings, authorizer: any Authorizer, nowMillis: UInt64) {
        self.init(clientID: clientID, context: PeerContext(settings: settings, authorizer: authorizer), nowMillis: nowMillis)
    }

    /// A peer sharing its gateway's settings and authorizer.
    public init(clientID: String, context: PeerContext, nowMillis: UInt64) {
        self.clientID = clientID
        self.context = context
        self.acceptedAtMillis = nowMillis
        self.lastInboundMillis = nowMillis
        self.lastPingMillis = nowMillis
        self.storedPingIntervalMillis = UInt32(clamping: context.settings.pingIntervalMillis)
    }

    /// Routes this peer is subscribed to (including those waiting for their snapshot).
    public var subscribedRoutes: [Route] { subscriptions.routes }
    /// Keys the subscription to `route` by this copy of the route: the loop passes its hub's copy, the one every
    /// delivery comes with, so `deliver` finds the subscription by comparing one pointer, not the route's text.
    public mutating func adoptRoute(_ route: Route) { subscriptions.adoptKey(route) }
    /// Number of subscriptions.
    public var subscriptionCount: Int { subscriptions.count }

    // MARK: Transport

    /// The transport finished its own handshake (immediately for plain TCP).
    public mutating func transportReady(nowMillis: UInt64) {
        precondition(phase == .accepted, "transportReady in phase \(phase)")
        phase = .handshake
        // The handshake timeout keeps counting from the accept: it bounds the whole unauthenticated time,
        // transport handshake (TLS) and connect frame together.
        lastInboundMillis = nowMillis
    }

    /// Bytes could not be decoded: answer with the numbered disconnect and close.
    public mutating func decodeFailed(_ error: FrameError) -> [PeerAction] {
        guard phase != .closed else { return [] }
        if case .oversized = error {
            return close(.frameTooLarge, "\(error)")
        }
        return close(.protocolViolation, "\(error)")
    }

    /// The socket closed or failed.
    public mutating func transportClosed() {
        phase = .closed
        subscriptions.removeAll()
    }

    // MARK: Inbound frames

    /// One decoded frame from the client.
    public mutating func receive(_ frame: ClientFrame, nowMillis: UInt64) -> [PeerAction] {
        switch phase {
        case .closed, .draining, .accepted:
            return []
        case .handshake:
            lastInboundMillis = nowMillis
            guard case .connect(let request) = frame else {
                return [.send(.error(ErrorFrame(code: .badRequest, message: "the first frame must be connect")))]
                    + close(.protocolViolation, "frame before connect")
            }
            return connect(request, nowMillis: nowMillis)
        case .active:
            lastInboundMillis = nowMillis
            switch frame {
            case .connect:
                return [.send(.error(ErrorFrame(code: .badRequest, message: "already connected")))]
            case .subscribe(let request):
                return subscribe(request)
            case .unsubscribe(let request):
                return unsubscribe(request)
            case .publish(let request):
                return publish(request, nowMillis: nowMillis).actions
            case .ack(let ack):
                guard let route = try? Route(parsing: ack.route), let subscription = subscriptions[route],
                    ack.offset <= subscription.lastOffset
                else { return [] }
                return [.acknowledged(route, offset: ack.offset)]
            case .ping:
                return [.send(.pong)]
            case .pong:
                return []
            case .refresh(let request):
                return refresh(request, nowMillis: nowMillis)
            case .presence(let request):
                return presence(request)
            case .heartbeat(let request):
                return heartbeat(request)
            }
        }
    }

    private mutating func connect(_ request: ConnectRequest, nowMillis: UInt64) -> [PeerAction] {
        guard request.protocolVersion == 1 else {
            return close(.unsupportedProtocol, "protocol version \(request.protocolVersion) is not supported; this server speaks 1")
        }
        let principal: Principal
        do {
            principal = try authorizer.authenticate(token: request.token, nowMillis: nowMillis)
        } catch .expired {
            return close(.tokenExpired, "token expired; reconnect with a fresh token")
        } catch {
            return close(.invalidToken, "\(error)")
        }
        self.principal = principal
        acceptedAtMillis = nowMillis  // from here on: when the token was accepted
        clientName = request.clientName
        phase = .active
        lastPingMillis = nowMillis
        pingIntervalMillis = settings.pingInterval(proposedMillis: request.pingIntervalMillis)
        let bounds = settings.acceptsPingIntervals ? (settings.minPingIntervalMillis, settings.maxPingIntervalMillis) : (0, 0)
        return [
            .send(
                .connected(
                    Connected(
                        clientID: clientID,
                        nodeID: settings.nodeID,
                        pingIntervalMillis: UInt32(clamping: pingIntervalMillis),
                        pongTimeoutMillis: UInt32(clamping: settings.pongTimeoutMillis),
                        maxFrameSize: UInt32(clamping: settings.maxFrameSize),
                        maxSubscriptions: UInt32(clamping: settings.maxSubscriptions),
                        tokenExpiresAtMillis: principal.expiresAtMillis ?? 0,
                        minPingIntervalMillis: UInt32(clamping: bounds.0),
                        maxPingIntervalMillis: UInt32(clamping: bounds.1)
                    )
                )
            )
        ]
    }

    private mutating func subscribe(_ request: SubscribeRequest) -> [PeerAction] {
        let route: Route
        do {
            route = try settings.routes.subscriptionRoute(parsing: request.route)
        } catch .unknownKind {
            return refuse(request.requestID, .unknownRouteKind, "route kind of '\(request.route)' is not served")
        } catch {
            return refuse(request.requestID, .malformedRoute, "\(error)")
        }
        let principal = self.principal!
        if settings.routes.entry(for: route.kind)?.allowsExternalSubscribe != true && principal.role != .admin {
            return violation(request.requestID, .unknownRouteKind, "route kind '\(route.kind)' is not open to clients")
        }
        guard principal.maySubscribe(to: route) else {
            return violation(request.requestID, .permissionDenied, "token does not allow \(route)")
        }
        guard subscriptions[route] == nil else {
            return refuse(request.requestID, .alreadySubscribed, "already subscribed to \(route)")
        }
        guard subscriptions.count < settings.maxSubscriptions else {
            return refuse(request.requestID, .tooManySubscriptions, "at most \(settings.maxSubscriptions) subscriptions")
        }
        subscriptions[route] = Subscription(
            lastOffset: 0, held: [], epoch: 0, requestID: request.requestID, presenceEvents: request.presenceEvents
        )
        return [.subscribe(route, since: request.since, requestID: request.requestID)]
    }

    /// Who is subscribed to a route: allowed when the token's routes cover it (as for subscribing).
    private mutating func presence(_ request: PresenceRequest) -> [PeerAction] {
        guard let route = try? settings.routes.subscriptionRoute(parsing: request.route) else {
            return refuse(request.requestID, .malformedRoute, "'\(request.route)' is not a route")
        }
        guard principal!.maySubscribe(to: route) else {
            return violation(request.requestID, .permissionDenied, "token does not allow \(route)")
        }
        return [.presence(route, requestID: request.requestID)]
    }

    /// The client asks for another ping interval: within the bounds it applies from the next ping on (counted from
    /// the previous one), unanswered; outside them, or when the interval is fixed, it is refused and nothing changes.
    private mutating func heartbeat(_ request: HeartbeatRequest) -> [PeerAction] {
        guard settings.acceptsPingIntervals else {
            return refuse(request.requestID, .invalidField, "this server's ping interval is fixed at \(settings.pingIntervalMillis) ms")
        }
        let asked = UInt64(request.pingIntervalMillis)
        guard asked >= settings.minPingIntervalMillis && asked <= settings.maxPingIntervalMillis else {
            return refuse(
                request.requestID, .invalidField,
                "ping interval \(asked) ms is outside this server's bounds (\(settings.minPingIntervalMillis)–\(settings.maxPingIntervalMillis) ms)"
            )
        }
        pingIntervalMillis = asked
        return []
    }

    /// Whether the subscription to `route` asked for join/leave events.
    public func wantsPresenceEvents(on route: Route) -> Bool { subscriptions[route]?.presenceEvents ?? false }

    private mutating func unsubscribe(_ request: UnsubscribeRequest) -> [PeerAction] {
        guard let route = try? Route(parsingSubscription: request.route) else {
            return refuse(request.requestID, .malformedRoute, "'\(request.route)' is not a route")
        }
        guard subscriptions.removeValue(forKey: route) != nil else {
            return refuse(request.requestID, .notSubscribed, "not subscribed to \(route)")
        }
        return [.unsubscribe(route), .send(.unsubscribed(Unsubscribed(requestID: request.requestID, route: route)))]
    }

    /// What a publish frame leads to: a change for the Store, or the frames that answer it at once.
    public enum PublishDecision {
        /// Hand the change to the Store's writer and report back with `publishResult(requestID:result:)`.
        case apply(OrderChange, requestID: UInt32, wantsReceipts: Bool)
        /// Carry these out instead (a refusal, a violation, or nothing in a phase that takes no publishes).
        case answer([PeerAction])

        /// The decision as the action list `receive(_:nowMillis:)` returns.
        var actions: [PeerAction] {
            switch self {
            case .apply(let change, let requestID, let wantsReceipts):
                [.publish(change, requestID: requestID, wantsReceipts: wantsReceipts)]
            case .answer(let actions):
                actions
            }
        }
    }

    /// `receive(.publish(request), nowMillis:)` for the gateway's read path: the same decision, without an action
    /// list for a publish that goes to the Store.
    public mutating func receivePublish(_ request: PublishRequest, nowMillis: UInt64) -> PublishDecision {
        guard phase == .active else { return .answer(receive(.publish(request), nowMillis: nowMillis)) }
        lastInboundMillis = nowMillis
        return publish(request, nowMillis: nowMillis)
    }

    private mutating func publish(_ request: PublishRequest, nowMillis: UInt64) -> PublishDecision {
        var changes: [OrderChange] = []
        if let actions = publish(request, nowMillis: nowMillis, into: &changes) { return .answer(actions) }
        return .apply(changes[0], requestID: request.requestID, wantsReceipts: request.wantsReceipts)
    }

    /// `receivePublish` for the gateway's read path: an accepted change is appended to `changes` (built in place
    /// in the caller's queue: no decision value is copied and destroyed per publish) and nil is returned; otherwise
    /// the actions that answer the publish.
    public mutating func receivePublish(
        _ request: PublishRequest,
        nowMillis: UInt64,
        into changes: inout [OrderChange]
    ) -> [PeerAction]? {
        guard phase == .active else { return receive(.publish(request), nowMillis: nowMillis) }
        lastInboundMillis = nowMillis
        return publish(request, nowMillis: nowMillis, into: &changes)
    }

    /// The checks of a publish; an accepted one's change is appended to `changes` (nil returned).
    private mutating func publish(_ request: PublishRequest, nowMillis: UInt64, into changes: inout [OrderChange]) -> [PeerAction]? {
        guard let orderID = request.validOrderID else {
            return refusePublish(request.requestID, .invalidField, "order id '\(request.orderID)' is not [A-Za-z0-9_.-]{1,64}")
        }
        guard let line = request.validLine else {
            return refusePublish(request.requestID, .unknownLine, "business line '\(request.line)' is not a valid name")
        }
        // Role and route scope, before the rate bucket: a refused publish costs the publisher no token. An admin may
        // publish anywhere, so its publishes build no route text for the check.
        // Read in place (a copy of the principal retains its texts and scopes).
        if principal!.role != .admin, let denial = principal!.publishDenial(for: .order(line, orderID)) {
            return violation(request.requestID, .permissionDenied, "\(denial)")
        }
        guard takePublishToken(nowMillis: nowMillis) else {
            return refusePublish(request.requestID, .rateLimited, "more than \(settings.publishesPerSecond) publishes per second")
        }
        guard !request.targetState.isEmpty else {
            return refusePublish(request.requestID, .invalidField, "target state is empty")
        }
        changes.append(
            OrderChange(
                orderID: orderID,
                line: line,
                targetState: request.target,
                fields: request.fields,
                idempotencyKey: request.idempotencyKey
            )
        )
        return nil
    }

    private mutating func refresh(_ request: RefreshRequest, nowMillis: UInt64) -> [PeerAction] {
        do {
            let refreshed = try authorizer.authenticate(token: request.token, nowMillis: nowMillis)
            guard refreshed.userID == principal?.userID else {
                return close(.invalidToken, "refresh token is for another user")
            }
            principal = refreshed
            acceptedAtMillis = nowMillis
            warnedTokenExpiry = false
            return []
        } catch .expired {
            return close(.tokenExpired, "refresh token already expired")
        } catch {
            return close(.invalidToken, "\(error)")
        }
    }

    // MARK: Completions from the gateway

    /// The snapshot read for a subscribe finished.
    public mutating func subscribeCompleted(route: Route, read: SubscribeRead) -> [PeerAction] {
        guard phase == .active || phase == .draining, var subscription = subscriptions[route],
            let held = subscription.held
        else { return [] }
        var missed: [OrderChangeRecord] = []
        var recovered = false
        if case .records(let records) = read.history {
            if records.count <= settings.maxRecoveredRecords {
                missed = records
                recovered = true
            }
        }
        let position = missed.last?.position ?? read.snapshot?.position ?? StreamPosition(epoch: read.epoch, offset: 0)
        subscription.lastOffset = position.offset
        subscription.epoch = position.epoch
        var actions: [PeerAction] = [
            .send(
                .subscribed(
                    Subscribed(
                        requestID: subscription.requestID,
                        route: route,
                        snapshot: read.snapshot,
                        position: position,
                        recovered: recovered,
                        missed: missed
                    )
                )
            )
        ]
        for record in held where route.isLineWide || Self.isNewer(record.position, than: subscription) {
            if route.isLineWide {
                actions.append(.send(.push(Push(route: record.route, record: record))))
                continue
            }
            subscription.lastOffset = record.position.offset
            subscription.epoch = record.position.epoch
            actions.append(.send(.push(Push(route: route, record: record))))
        }
        subscription.held = nil
        subscriptions[route] = subscription
        return actions
    }

    /// The snapshot read for a subscribe failed (store unavailable): the request fails, nothing stays subscribed.
    public mutating func subscribeFailed(route: Route, error: StoreError) -> [PeerAction] {
        guard let subscription = subscriptions.removeValue(forKey: route) else { return [] }
        return [
            .unsubscribe(route),
            .send(.error(ErrorFrame(requestID: subscription.requestID, code: error.code, message: "\(error)"))),
        ]
    }

    /// The Store answered a publish.
    public func publishCompleted(requestID: UInt32, result: Result<AppliedChange, StoreError>) -> [PeerAction] {
        guard let frame = publishResult(requestID: requestID, result: result) else { return [] }
        return [.send(frame)]
    }

    /// Whether publish results are still sent (`publishResult` returns a frame): the session is active or draining.
    public var answersPublishes: Bool { phase == .active || phase == .draining }

    /// The frame that answers a publish the Store completed (`publishCompleted` without the action list), or nil
    /// when the connection takes no answers any more.
    public func publishResult(requestID: UInt32, result: Result<AppliedChange, StoreError>) -> ServerFrame? {
        guard answersPublishes else { return nil }
        switch result {
        case .success(let applied):
            let record = applied.record
            return .publishResult(
                .accepted(
                    requestID: requestID, position: record.position, timestampMillis: record.timestampMillis,
                    deduplicated: applied.deduplicated
                )
            )
        case .failure(let error):
            return .publishResult(
                PublishResult(
                    requestID: requestID,
                    outcome: .refused(ErrorFrame(requestID: requestID, code: error.code, message: "\(error)"))
                )
            )
        }
    }

    /// Whether a record on a route this peer may hold should go out. Called on the hot path: no allocation
    /// except when a subscription is still waiting for its snapshot.
    public mutating func deliver(_ record: OrderChangeRecord, on route: Route) -> DeliveryDecision {
        guard phase == .active || phase == .draining else { return .ignore }
        let decision = subscriptions.update(route) { subscription -> DeliveryDecision in
            if subscription.held != nil {
                subscription.held!.append(record)
                return .held
            }
            // A line-wide subscription is live-only and spans many orders: no position to compare (see
            // `Route.isLineWide`); the broker delivers each order's records in commit order.
            if route.isLineWide { return .send }
            guard Self.isNewer(record.position, than: subscription) else { return .ignore }
            subscription.lastOffset = record.position.offset
            subscription.epoch = record.position.epoch
            return .send
        }
        return decision ?? .ignore
    }

    private static func isNewer(_ position: StreamPosition, than subscription: Subscription) -> Bool {
        position.epoch != subscription.epoch || position.offset > subscription.lastOffset
    }

    // MARK: Time

    /// Periodic check: handshake timeout, heartbeat ping and timeout, token expiry.
    public mutating func tick(nowMillis: UInt64) -> [PeerAction] {
        switch phase {
        case .accepted, .handshake:
            if nowMillis >= acceptedAtMillis + settings.handshakeTimeoutMillis {
                return close(.handshakeTimeout, "no connect frame within \(settings.handshakeTimeoutMillis) ms")
            }
            return []
        case .draining, .closed:
            return []
        case .active:
            if let expiry = principal?.expiresAtMillis {
                if nowMillis >= expiry {
                    return close(.tokenExpired, "token expired without refresh")
                }
                // The lead is the configured one, or half the token's life left when it was accepted if that is
                // shorter: a client refreshing with tokens that live less than the lead is warned once per token,
                // half-way, instead of on every tick (which made it ask its token provider in a tight loop).
                let lead = min(settings.tokenWarningLeadMillis, (expiry &- min(expiry, acceptedAtMillis)) / 2)
                if !warnedTokenExpiry && nowMillis + lead >= expiry {
                    warnedTokenExpiry = true
                    return [.send(.tokenExpiring(TokenExpiring(expiresAtMillis: expiry)))]
                }
            }
            let silence = nowMillis &- lastInboundMillis
            if silence >= pingIntervalMillis + settings.pongTimeoutMillis {
                return close(.heartbeatTimeout, "no frame for \(silence) ms")
            }
            if nowMillis &- lastPingMillis >= pingIntervalMillis {
                lastPingMillis = nowMillis
                return [.send(.ping)]
            }
            return []
        }
    }

    // MARK: Shutdown

    /// The node is draining: tell the client to come back after `reconnectAfterMillis`.
    public mutating func drain(reconnectAfterMillis: UInt32) -> [PeerAction] {
        switch phase {
        case .closed, .draining:
            return []
        case .accepted, .handshake, .active:
            let actions = close(.shutdown, "server shutting down", reconnectAfterMillis: reconnectAfterMillis)
            return actions
        }
    }

    /// Close with a numbered code, from the gateway (slow consumer, admin, server error).
    public mutating func disconnect(_ code: DisconnectCode, reason: String) -> [PeerAction] {
        close(code, reason)
    }

    // MARK: Helpers

    private mutating func close(_ code: DisconnectCode, _ reason: String, reconnectAfterMillis: UInt32 = 0) -> [PeerAction] {
        guard phase != .closed && phase != .draining else { return [] }
        phase = .draining
        var actions: [PeerAction] = subscriptions.routes.map { .unsubscribe($0) }
        subscriptions.removeAll()
        actions.append(.close(Disconnect(code: code, reason: reason, reconnectAfterMillis: reconnectAfterMillis)))
        return actions
    }

    private func refuse(_ requestID: UInt32, _ code: ErrorCode, _ message: String) -> [PeerAction] {
        [.send(.error(ErrorFrame(requestID: requestID, code: code, message: message)))]
    }

    private func refusePublish(_ requestID: UInt32, _ code: ErrorCode, _ message: String) -> [PeerAction] {
        [.send(.publishResult(PublishResult(requestID: requestID, outcome: .refused(ErrorFrame(requestID: requestID, code: code, message: message)))))]
    }

    /// Refills the publish bucket for the time since the last publish and takes one token; false when empty.
    /// The bucket starts full at the first publish: the same as a bucket made full at the accept, since refilling
    /// never takes it past the burst.
    private mutating func takePublishToken(nowMillis: UInt64) -> Bool {
        guard settings.publishesPerSecond > 0 else { return true }
        let burst = Double(max(1, settings.publishBurst))
        if publishBucket == nil {
            publishBucket = PublishBucket(tokens: burst, refilledMillis: nowMillis)
        } else if !isKnownUniquelyReferenced(&publishBucket) {
            publishBucket = PublishBucket(tokens: publishBucket!.tokens, refilledMillis: publishBucket!.refilledMillis)
        }
        let bucket = publishBucket!
        let elapsed = Double(nowMillis &- bucket.refilledMillis) / 1000
        if nowMillis > bucket.refilledMillis {
            bucket.tokens = min(burst, bucket.tokens + elapsed * Double(settings.publishesPerSecond))
            bucket.refilledMillis = nowMillis
        }
        guard bucket.tokens >= 1 else { return false }
        bucket.tokens -= 1
        return true
    }

    private mutating func violation(_ requestID: UInt32, _ code: ErrorCode, _ message: String) -> [PeerAction] {
        if violations < .max { violations += 1 }
        if violations >= settings.maxViolations {
            return refuse(requestID, code, message) + close(.forbidden, "\(violations) permission violations")
        }
        return refuse(requestID, code, message)
    }
}

@available(*, unavailable)
extension PeerStateMachine: Sendable {}
