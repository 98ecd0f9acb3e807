/// Asks who is subscribed to a route now (the token's routes must cover it).
public struct PresenceRequest: Hashable, Sendable {
    /// Correlates the reply (`presenceReply` or `error`).
    public var requestID: UInt32
    /// The route URL, e.g. `order://taxi/8812`.
    public var route: String

    public init(requestID: UInt32, route: String) {
        self.requestID = requestID
        self.route = route
    }
}

/// One subscriber of a route: who (the token's `sub`), with which client, on which connection, since when.
public struct PresenceMember: Hashable, Sendable {
    /// The user (or service) id from the token.
    public var userID: String
    /// The client software name from `connect`.
    public var clientName: String
    /// The server's id of the connection.
    public var connectionID: String
    /// When the subscription started (ms since the Unix epoch).
    public var sinceMillis: UInt64
    /// The node the connection is on.
    public var nodeID: String

    public init(userID: String, clientName: String, connectionID: String, sinceMillis: UInt64, nodeID: String) {
        self.userID = userID
        self.clientName = clientName
        self.connectionID = connectionID
        self.sinceMillis = sinceMillis
        self.nodeID = nodeID
    }
}

/// Who is subscribed to a route now, over every node.
public struct PresenceReply: Hashable, Sendable {
    /// The request this answers (0 outside a reply, e.g. in the admin API).
    public var requestID: UInt32
    /// The route.
    public var route: Route
    /// Subscriptions (connections) to the route.
    public var count: UInt32
    /// Distinct user ids among them.
    public var users: UInt32
    /// The route has more subscribers than the counts-only threshold: `members` is empty, the counts are exact.
    public var countsOnly: Bool
    /// The subscribers, oldest first (empty when `countsOnly`).
    public var members: [PresenceMember]

    public init(requestID: UInt32, route: Route, count: UInt32, users: UInt32, countsOnly: Bool, members: [PresenceMember]) {
        self.requestID = requestID
        self.route = route
        self.count = count
        self.users = users
        self.countsOnly = countsOnly
        self.members = members
    }
}

/// Someone joined (subscribed to) or left a route.
public struct PresenceEvent: Hashable, Sendable {
    /// The route.
    public var route: Route
    /// True for a join, false for a leave.
    public var joined: Bool
    /// Who.
    public var member: PresenceMember

    public init(route: Route, joined: Bool, member: PresenceMember) {
        self.route = route
        self.joined = joined
        self.member = member
    }
}
