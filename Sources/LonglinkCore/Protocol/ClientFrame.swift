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
///
/// The order id, the line and the target state travel as text, and the gateway validates them. A request made
/// from the domain values (`init(requestID:order:line:target:…)`, which the codec's publish decoder uses once it
/// has checked and hashed the bytes) keeps what they know, so `validOrderID`, `validLine` and `target` do not scan
/// or hash the texts again; setting a text forgets it. Two requests are equal when their texts and values are,
/// however they were made.
public struct PublishRequest: Hashable, Sendable {
    /// Correlates the `publishResult`.
    public var requestID: UInt32
    /// The order id (validated by the gateway).
    public var orderID: String { didSet { orderIDHash = nil } }
    /// The business line name.
    public var line: String { didSet { lineIsValid = false } }
    /// The target state name.
    public var targetState: String { didSet { targetStateHash = nil } }
    /// Fields to set.
    public var fields: OrderFields
    /// Idempotency key; empty when none.
    public var idempotencyKey: String
    /// When set, the gateway sends a `deliveryReceipt` once a subscriber has acked the stored record.
    public var wantsReceipts: Bool

    /// `orderID`'s `textHash` when the request was made from a valid `OrderID`; nil when the text is unchecked.
    private(set) var orderIDHash: UInt64?
    /// Whether the request was made from a `BusinessLine` (so `line` is a valid name).
    private(set) var lineIsValid: Bool
    /// `targetState`'s `nameHash` when the request was made from an `OrderState`.
    private(set) var targetStateHash: UInt64?

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
        self.orderIDHash = nil
        self.lineIsValid = false
        self.targetStateHash = nil
    }

    /// A request for values already checked: the gateway takes them as they are.
    public init(
        requestID: UInt32,
        order: OrderID,
        line: BusinessLine,
        target: OrderState,
        fields: OrderFields = .none,
        idempotencyKey: String = "",
        wantsReceipts: Bool = false
    ) {
        self.init(
            requestID: requestID,
            orderID: order.rawValue,
            line: line.name,
            targetState: target.name,
            fields: fields,
            idempotencyKey: idempotencyKey,
            wantsReceipts: wantsReceipts
        )
        orderIDHash = order.textHash
        lineIsValid = true
        targetStateHash = target.nameHash
    }

    /// `orderID` as an `OrderID`; nil when it is not a valid order id. Checked here unless the request was made
    /// from an `OrderID`.
    public var validOrderID: OrderID? {
        if let orderIDHash { return OrderID(validated: orderID, textHash: orderIDHash) }
        return OrderID(orderID)
    }

    /// `line` as a `BusinessLine`; nil when it is not a valid name. Checked here unless the request was made from
    /// a `BusinessLine`.
    public var validLine: BusinessLine? {
        lineIsValid ? BusinessLine(validated: line) : BusinessLine(line)
    }

    /// `targetState` as an `OrderState` (hashed here unless the request was made from one).
    public var target: OrderState {
        if let targetStateHash { return OrderState(name: targetState, nameHash: targetStateHash) }
        return OrderState(targetState)
    }

    public static func == (lhs: PublishRequest, rhs: PublishRequest) -> Bool {
        lhs.requestID == rhs.requestID && lhs.orderID == rhs.orderID && lhs.line == rhs.line
            && lhs.targetState == rhs.targetState && lhs.fields == rhs.fields && lhs.idempotencyKey == rhs.idempotencyKey
            && lhs.wantsReceipts == rhs.wantsReceipts
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(requestID)
        hasher.combine(orderID)
        hasher.combine(line)
        hasher.combine(targetState)
        hasher.combine(fields)
        hasher.combine(idempotencyKey)
        hasher.combine(wantsReceipts)
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
