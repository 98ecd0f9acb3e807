/// Who is subscribed to which route, for `presence` requests, the admin API and join/leave events.
/// `LocalPresence` serves one node; `RedisPresence` (LonglinkRedis) shares presence between nodes through Redis,
/// with per-node entries that vanish when a node stops refreshing them (a node killed with `kill -9`).
///
/// Contract: `joined` and `left` are called by the gateway loops (any thread) for each subscription that starts
/// and ends on this node and must not block; `presence(of:)` answers with every member over every node the
/// implementation knows of, oldest first, on any thread.
public protocol PresenceStore: Sendable {
    /// A subscription to `route` started on this node.
    func joined(_ route: Route, _ member: PresenceMember)
    /// The subscription of connection `connectionID` to `route` on this node ended.
    func left(_ route: Route, connectionID: String)
    /// Subscriptions to `route` on this node now (cheap; decides whether join/leave events are sent).
    func localCount(of route: Route) -> Int
    /// Every member of `route` over all nodes, oldest first.
    func presence(of route: Route, completion: @escaping @Sendable (Result<[PresenceMember], PresenceError>) -> Void)
    /// A route with more subscribers than this is reported with counts only, and sends no join/leave events.
    var countsOnlyAbove: Int { get }
    /// Removes this node's entries (clean shutdown) and releases resources.
    func shutdown()
    /// Hands the join/leave events of other nodes to `handler` (any thread), for the routes being watched.
    func deliverRemoteEvents(to handler: @escaping @Sendable (PresenceEvent) -> Void)
    /// A subscription on this node asks for join/leave events on `route` (reference-counted by the store).
    func watchEvents(_ route: Route)
    /// One fewer subscription on this node asks for events on `route`.
    func unwatchEvents(_ route: Route)
}

extension PresenceStore {
    /// One node has no other nodes' events.
    public func deliverRemoteEvents(to handler: @escaping @Sendable (PresenceEvent) -> Void) {}
    /// Nothing to watch on one node.
    public func watchEvents(_ route: Route) {}
    /// Nothing to watch on one node.
    public func unwatchEvents(_ route: Route) {}
}

/// Why presence could not be read.
public enum PresenceError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The backend (Redis) is unreachable; retry.
    case unavailable(String)

    public var description: String {
        switch self {
        case .unavailable(let why): "presence unavailable: \(why)"
        }
    }
}

extension PresenceReply {
    /// The reply for `members` of `route`: counts always, the members unless there are more than `countsOnlyAbove`.
    public init(requestID: UInt32, route: Route, members: [PresenceMember], countsOnlyAbove: Int) {
        let countsOnly = members.count > countsOnlyAbove
        self.init(
            requestID: requestID,
            route: route,
            count: UInt32(clamping: members.count),
            users: UInt32(clamping: Set(members.map(\.userID)).count),
            countsOnly: countsOnly,
            members: countsOnly ? [] : members.sorted { ($0.sinceMillis, $0.connectionID) < ($1.sinceMillis, $1.connectionID) }
        )
    }
}
