import Synchronization

/// Presence of one node, in memory: route → connection id → member, behind one lock (taken per subscribe and
/// unsubscribe, never per message). With several nodes use `RedisPresence`, which keeps one of these for its own
/// node and shares it through Redis.
public final class LocalPresence: PresenceStore {
    private let routes = Mutex<[Route: [String: PresenceMember]]>([:])
    public let countsOnlyAbove: Int

    /// - Parameter countsOnlyAbove: routes with more subscribers report counts only (and send no join/leave events).
    public init(countsOnlyAbove: Int = 100) { self.countsOnlyAbove = countsOnlyAbove }

    public func joined(_ route: Route, _ member: PresenceMember) {
        routes.withLock { $0[route, default: [:]][member.connectionID] = member }
    }

    public func left(_ route: Route, connectionID: String) {
        routes.withLock { table in
            table[route]?[connectionID] = nil
            if table[route]?.isEmpty == true { table[route] = nil }
        }
    }

    public func localCount(of route: Route) -> Int { routes.withLock { $0[route]?.count ?? 0 } }

    /// This node's members of `route`.
    public func members(of route: Route) -> [PresenceMember] { routes.withLock { Array(($0[route] ?? [:]).values) } }

    /// Every route with members on this node.
    public var routesWithMembers: [Route] { routes.withLock { Array($0.keys) } }

    public func presence(of route: Route, completion: @escaping @Sendable (Result<[PresenceMember], PresenceError>) -> Void) {
        completion(.success(members(of: route)))
    }

    public func shutdown() { routes.withLock { $0.removeAll() } }
}
