/// Everything a client sends to the gateway. One case per `oneof` member of `ClientFrame` in the proto.
///
/// Fields that name routes, orders and states travel as text and are validated by the gateway, so a bad
/// value is a typed error on that request only, not a broken connection.
public enum ClientFrame: Hashable, Sendable {
    /// Opens the session; must be the first frame.
    case connect(ConnectRequest)
    /// Subscribes to a route, optionally resuming from a position.
    case subscribe(SubscribeRequest)
    /// Ends a subscription.
    case unsubscribe(UnsubscribeRequest)
    /// Asks the Store to apply an order change (backends with the publisher role).
    case publish(PublishRequest)
    /// Tells the gateway the client processed a route up to an offset.
    case ack(Ack)
    /// Liveness probe from the client; answered with `pong`.
    case ping
    /// Answer to a server `ping`.
    case pong
    /// Replaces the connection's token before it expires.
    case refresh(RefreshRequest)
    /// Asks who is subscribed to a route now; answered with `presenceReply` or `error`.
    case presence(PresenceRequest)
    /// Asks the server to ping at another interval (smart heartbeat); refused with `error` outside its bounds.
    case heartbeat(HeartbeatRequest)
}

/// The first frame of a session.
public struct ConnectRequest: Hashable, Sendable {
    /// Protocol version the client speaks (currently 1).
    public var protocolVersion: UInt32
    /// The connection token (a JWT); empty when the server runs without authentication.
    public var token: String
    /// Client software name, for logs and inspection (e.g. `longlink-swift`).
    public var clientName: String
    /// Client software version.
    public var clientVersion: String
    /// The ping interval the client asks for; 0 for the server's default (clamped to the server's bounds).
    public var pingIntervalMillis: UInt32

    public init(
        protocolVersion: UInt32 = 1,
        token: String = "",
        clientName: String = "",
        clientVersion: String = "",
        pingIntervalMillis: UInt32 = 0
    ) {
        self.protocolVersion = protocolVersion
        self.token = token
        self.clientName = clientName
        self.clientVersion = clientVersion
        self.pingIntervalMillis = pingIntervalMillis
    }
}

/// Asks the server to ping at another interval from now on (the client's heartbeat learning).
public struct HeartbeatRequest: Hashable, Sendable {
    /// Correlates a refusal (`error`); an accepted request is not answered.
    public var requestID: UInt32
    /// The interval asked for, within the bounds of `Connected`.
    public var pingIntervalMillis: UInt32

    public init(requestID: UInt32, pingIntervalMillis: UInt32) {
        self.requestID = requestID
        self.pingIntervalMillis = pingIntervalMillis
    }
}

/// Subscribe to a route.
public struct SubscribeRequest: Hashable, Sendable {
    /// Correlates the reply (`subscribed` or `error`) with this request; chosen by the client.
    public var requestID: UInt32
    /// The route URL, e.g. `order://taxi/8812`.
    public var route: String
    /// The last position the client saw, to receive what it missed; nil for a fresh subscription.
    public var since: StreamPosition?
    /// Also send join/leave `presenceEvent`s for this route (off by default).
    public var presenceEvents: Bool

    public init(requestID: UInt32, route: String, since: StreamPosition? = nil, presenceEvents: Bool = false) {
        self.requestID = requestID
        self.route = route
        self.since = since
        self.presenceEvents = presenceEvents
    }
}

/// Unsubscribe from a route.
public struct UnsubscribeRequest: Hashable, Sendable {
    /// Correlates the reply.
    public var requestID: UInt32
    /// The route URL.
    public var route: String

    public init(requestID: UInt32, route: String) {
        self.requestID = requestID
        self.route = route
    }
}

/// An order change a backend asks the Store to apply.
public struct PublishRequest: Hashable, Sendable {
    /// Correlates the `publishResult`.
    public var requestID: UInt32
    /// The order id (validated by the gateway).
    public var orderID: String
    /// The business line name.
    public var line: String
    /// The target state name.
    public var targetState: String
    /// Fields to set.
    public var fields: OrderFields
    /// Idempotency key; empty when none.
    public var idempotencyKey: String
    /// When set, the gateway sends a `deliveryReceipt` once a subscriber has acked the stored record.
    public var wantsReceipts: Bool

    public init(
        requestID: UInt32,
        orderID: String,
        line: String,
        targetState: String,
        fields: OrderFields = .none,
        idempotencyKey: String = "",
        wantsReceipts: Bool = false
    ) {
        self.requestID = requestID
        self.orderID = orderID
        self.line = line
        self.targetState = targetState
        self.fields = fields
        self.idempotencyKey = idempotencyKey
        self.wantsReceipts = wantsReceipts
    }
}

/// The client processed `route` up to `offset`.
public struct Ack: Hashable, Sendable {
    /// The route URL.
    public var route: String
    /// Highest processed offset.
    public var offset: UInt64

    public init(route: String, offset: UInt64) {
        self.route = route
        self.offset = offset
    }
}

/// A fresh token for the running session.
public struct RefreshRequest: Hashable, Sendable {
    /// The new token.
    public var token: String

    public init(token: String) { self.token = token }
}
