/// Everything the gateway sends to a client. One case per `oneof` member of `ServerFrame` in the proto.
public enum ServerFrame: Hashable, Sendable {
    /// The session is open; carries the server's timings and limits.
    case connected(Connected)
    /// A subscription is active; carries the snapshot and any records missed since the client's position.
    case subscribed(Subscribed)
    /// A subscription ended.
    case unsubscribed(Unsubscribed)
    /// The outcome of a publish.
    case publishResult(PublishResult)
    /// A new record on a subscribed route: the hot frame, kept as small as possible.
    case push(Push)
    /// Liveness probe from the server; the client answers with `pong` (any frame counts).
    case ping
    /// Answer to a client `ping`.
    case pong
    /// A request failed (or, with request id 0, the connection is in trouble).
    case error(ErrorFrame)
    /// The server closes the connection right after this frame.
    case disconnect(Disconnect)
    /// A subscriber acked a record the publisher asked receipts for.
    case deliveryReceipt(DeliveryReceipt)
    /// The token expires soon; send `refresh` with a new one.
    case tokenExpiring(TokenExpiring)
    /// Who is subscribed to a route (the answer to a `presence` request).
    case presenceReply(PresenceReply)
    /// Someone joined or left a route subscribed to with presence events.
    case presenceEvent(PresenceEvent)
}

/// Session parameters announced by the server.
public struct Connected: Hashable, Sendable {
    /// Protocol version the server speaks.
    public var protocolVersion: UInt32
    /// The server's id for this connection.
    public var clientID: String
    /// The node serving the connection.
    public var nodeID: String
    /// How often the server pings on this connection (the client's proposal when it made one within the bounds).
    public var pingIntervalMillis: UInt32
    /// How long the server waits for any frame before closing with `heartbeatTimeout`.
    public var pongTimeoutMillis: UInt32
    /// Largest frame the server accepts.
    public var maxFrameSize: UInt32
    /// Most subscriptions one connection may hold.
    public var maxSubscriptions: UInt32
    /// When the token expires (ms since the Unix epoch); 0 when it does not.
    public var tokenExpiresAtMillis: UInt64
    /// The shortest ping interval a client may ask for; 0 when the server's interval is fixed.
    public var minPingIntervalMillis: UInt32
    /// The longest ping interval a client may ask for; 0 when the server's interval is fixed.
    public var maxPingIntervalMillis: UInt32

    /// Whether this server lets the client choose its ping interval (within the bounds).
    public var acceptsPingIntervals: Bool { maxPingIntervalMillis > 0 && minPingIntervalMillis <= maxPingIntervalMillis }

    public init(
        protocolVersion: UInt32 = 1,
        clientID: String,
        nodeID: String,
        pingIntervalMillis: UInt32,
        pongTimeoutMillis: UInt32,
        maxFrameSize: UInt32,
        maxSubscriptions: UInt32,
        tokenExpiresAtMillis: UInt64 = 0,
        minPingIntervalMillis: UInt32 = 0,
        maxPingIntervalMillis: UInt32 = 0
    ) {
        self.minPingIntervalMillis = minPingIntervalMillis
        self.maxPingIntervalMillis = maxPingIntervalMillis
        self.protocolVersion = protocolVersion
        self.clientID = clientID
        self.nodeID = nodeID
        self.pingIntervalMillis = pingIntervalMillis
        self.pongTimeoutMillis = pongTimeoutMillis
        self.maxFrameSize = maxFrameSize
        self.maxSubscriptions = maxSubscriptions
        self.tokenExpiresAtMillis = tokenExpiresAtMillis
    }
}

/// A subscription is active.
public struct Subscribed: Hashable, Sendable {
    /// The request this answers.
    public var requestID: UInt32
    /// The route.
    public var route: Route
    /// The order as it is now; nil when it has no record yet.
    public var snapshot: OrderSnapshot?
    /// The position pushes continue from (the snapshot's position, or the last missed record's).
    public var position: StreamPosition
    /// True when every record since the client's position is in `missed`; false when the position was too
    /// old or from another epoch, so the client must rely on the snapshot.
    public var recovered: Bool
    /// Records after the client's position, oldest first (empty for a fresh subscription).
    public var missed: [OrderChangeRecord]

    public init(
        requestID: UInt32,
        route: Route,
        snapshot: OrderSnapshot?,
        position: StreamPosition,
        recovered: Bool,
        missed: [OrderChangeRecord] = []
    ) {
        self.requestID = requestID
        self.route = route
        self.snapshot = snapshot
        self.position = position
        self.recovered = recovered
        self.missed = missed
    }
}

/// A subscription ended.
public struct Unsubscribed: Hashable, Sendable {
    /// The request this answers.
    public var requestID: UInt32
    /// The route.
    public var route: Route

    public init(requestID: UInt32, route: Route) {
        self.requestID = requestID
        self.route = route
    }
}

/// The outcome of a publish: the stored record's position, or a typed error.
public struct PublishResult: Hashable, Sendable {
    /// How the publish ended.
    public enum Outcome: Hashable, Sendable {
        /// Stored durably at `position`, accepted at `timestampMillis`. `deduplicated` is true when the
        /// idempotency key had been applied before and this is that first result.
        case accepted(position: StreamPosition, timestampMillis: UInt64, deduplicated: Bool)
        /// Refused; nothing was stored.
        case refused(ErrorFrame)
    }

    /// The request this answers.
    public var requestID: UInt32
    /// The outcome.
    public var outcome: Outcome

    public init(requestID: UInt32, outcome: Outcome) {
        self.requestID = requestID
        self.outcome = outcome
    }

    /// The answer to request `requestID`: stored at `position`, accepted at `timestampMillis`.
    public static func accepted(
        requestID: UInt32, position: StreamPosition, timestampMillis: UInt64, deduplicated: Bool
    ) -> PublishResult {
        PublishResult(
            requestID: requestID,
            outcome: .accepted(position: position, timestampMillis: timestampMillis, deduplicated: deduplicated)
        )
    }
}

/// A record pushed to a subscriber. On the wire the order id and line are not repeated (the route has
/// them) and the idempotency key is not sent.
public struct Push: Hashable, Sendable {
    /// The route the record belongs to.
    public var route: Route
    /// The record.
    public var record: OrderChangeRecord
    /// True when records before this one were dropped for this subscriber (slow consumer, `coalesce` policy):
    /// the app should fetch history or resubscribe from its last position.
    public var skippedBefore: Bool

    public init(route: Route, record: OrderChangeRecord, skippedBefore: Bool = false) {
        self.route = route
        self.record = record
        self.skippedBefore = skippedBefore
    }
}

/// A numbered error, for one request (`requestID` ≠ 0) or the connection (`requestID` = 0).
public struct ErrorFrame: Hashable, Sendable, Error, CustomStringConvertible {
    /// The request that failed; 0 for connection-level errors.
    public var requestID: UInt32
    /// The numbered code.
    public var code: ErrorCode
    /// A human-readable explanation.
    public var message: String
    /// Whether the same request may succeed later.
    public var retryable: Bool

    public init(requestID: UInt32 = 0, code: ErrorCode, message: String, retryable: Bool? = nil) {
        self.requestID = requestID
        self.code = code
        self.message = message
        self.retryable = retryable ?? code.isTemporary
    }

    public var description: String { "\(code): \(message)" }
}

/// The reason the server is closing the connection.
public struct Disconnect: Hashable, Sendable, CustomStringConvertible {
    /// The numbered code; its range says whether to reconnect.
    public var code: DisconnectCode
    /// A human-readable reason.
    public var reason: String
    /// How long to wait before reconnecting (already jittered by the server); 0 = client's own backoff.
    public var reconnectAfterMillis: UInt32

    public init(code: DisconnectCode, reason: String, reconnectAfterMillis: UInt32 = 0) {
        self.code = code
        self.reason = reason
        self.reconnectAfterMillis = reconnectAfterMillis
    }

    /// Whether the client should reconnect.
    public var shouldReconnect: Bool { code.shouldReconnect }

    public var description: String { "\(code): \(reason)" }
}

/// A subscriber received (acked) a record the publisher asked receipts for.
public struct DeliveryReceipt: Hashable, Sendable {
    /// The route of the record.
    public var route: Route
    /// The record's position.
    public var position: StreamPosition
    /// The subscriber's connection id.
    public var subscriberID: String
    /// How many subscribers have acked this record so far.
    public var ackedCount: UInt32

    public init(route: Route, position: StreamPosition, subscriberID: String, ackedCount: UInt32) {
        self.route = route
        self.position = position
        self.subscriberID = subscriberID
        self.ackedCount = ackedCount
    }
}

/// The token expires soon.
public struct TokenExpiring: Hashable, Sendable {
    /// Expiry, ms since the Unix epoch.
    public var expiresAtMillis: UInt64

    public init(expiresAtMillis: UInt64) { self.expiresAtMillis = expiresAtMillis }
}
