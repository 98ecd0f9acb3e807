import LonglinkCore

/// One loop's index of who listens to what: route → the connections subscribed on this loop.
///
/// Loop-confined, like everything a loop owns; each loop has its own hub, so fan-out takes no lock (centrifuge
/// shards its hub for the same reason). A route with one subscriber (a rider watching their order, the common
/// case) is stored inline with no allocation of its own; a route with many gets a `Subscribers` list whose removal
/// is O(1) by swapping with the last, so a broadcast route survives a mass disconnect.
///
/// Routes are keyed by their parts (`RouteKey`), so a record finds its subscribers without building its route's
/// text; each entry keeps the subscribed `Route` to hand to its connections.
final class Hub {
    /// The connections subscribed to one route with more than one subscriber. A few are searched linearly (most
    /// routes have a handful of subscribers, and a dictionary of positions cost more than the list: idle memory
    /// per connection is a budget, issue 19); past `indexedAbove` a dictionary of positions keeps removal O(1),
    /// so a broadcast route survives a mass disconnect.
    final class Subscribers {
        private(set) var connections: [Connection] = []
        /// Positions in `connections`, kept only while there are more than `indexedAbove`.
        private var indexes: [ObjectIdentifier: Int]?

        static let indexedAbove = 16

        var count: Int { connections.count }

        func add(_ connection: Connection) {
            guard position(of: connection) == nil else { return }
            connections.append(connection)
            if indexes != nil {
                indexes![ObjectIdentifier(connection)] = connections.count - 1
            } else if connections.count > Self.indexedAbove {
                var built: [ObjectIdentifier: Int] = [:]
                built.reserveCapacity(connections.count)
                for (index, each) in connections.enumerated() { built[ObjectIdentifier(each)] = index }
                indexes = built
            }
        }

        func remove(_ connection: Connection) -> Bool {
            guard let index = position(of: connection) else { return false }
            indexes?[ObjectIdentifier(connection)] = nil
            let last = connections.removeLast()
            if index < connections.count {
                connections[index] = last
                indexes?[ObjectIdentifier(last)] = index
            }
            if connections.count <= Self.indexedAbove / 2 { indexes = nil }
            return true
        }

        private func position(of connection: Connection) -> Int? {
            if let indexes { return indexes[ObjectIdentifier(connection)] }
            return connections.firstIndex { $0 === connection }
        }
    }

    /// A route's subscribers on this loop.
    enum Slot {
        case one(Connection)
        case many(Subscribers)

        var count: Int {
            switch self {
            case .one: 1
            case .many(let subscribers): subscribers.count
            }
        }
    }

    /// A route's subscribers and the route itself.
    struct Entry {
        var route: Route
        var slot: Slot
    }

    private var routes: [RouteKey: Entry] = [:]
    /// Line-wide routes (`order://taxi/*`) with subscribers on this loop: while 0, a record is looked up once.
    private(set) var lineRouteCount = 0

    /// Adds a subscriber; `first` is true when it is the route's first on this loop (ask the broker for it), and
    /// `route` is the hub's copy of the route, the one deliveries pass (`Connection.adoptRoute`).
    func add(_ connection: Connection, to route: Route) -> (first: Bool, route: Route) {
        let key = RouteKey(route)
        guard let entry = routes[key] else {
            routes[key] = Entry(route: route, slot: .one(connection))
            if key.isLineWide { lineRouteCount += 1 }
            return (true, route)
        }
        switch entry.slot {
        case .one(let existing):
            guard existing !== connection else { return (false, entry.route) }
            let subscribers = Subscribers()
            subscribers.add(existing)
            subscribers.add(connection)
            routes[key]?.slot = .many(subscribers)
        case .many(let subscribers):
            subscribers.add(connection)
        }
        return (false, entry.route)
    }

    /// Removes a subscriber. `removed` tells whether it was subscribed; `emptied` whether the route has no
    /// subscriber left on this loop (tell the broker).
    func remove(_ connection: Connection, from route: Route) -> (removed: Bool, emptied: Bool) {
        let key = RouteKey(route)
        switch routes[key]?.slot {
        case nil:
            return (false, false)
        case .one(let existing):
            guard existing === connection else { return (false, false) }
            routes[key] = nil
            if key.isLineWide { lineRouteCount -= 1 }
            return (true, true)
        case .many(let subscribers):
            let removed = subscribers.remove(connection)
            switch subscribers.count {
            case 0:
                routes[key] = nil
                if key.isLineWide { lineRouteCount -= 1 }
                return (removed, true)
            case 1:
                routes[key]?.slot = .one(subscribers.connections[0])
                return (removed, false)
            default:
                return (removed, false)
            }
        }
    }

    /// Calls `body` for every subscriber of `route` on this loop and returns how many there were (one lookup of
    /// the route). Subscribers may unsubscribe (be cut) from inside `body`; the iteration works on a snapshot.
    @discardableResult
    func forEachSubscriber(of route: Route, _ body: (Connection) -> Void) -> Int {
        forEachSubscriber(of: RouteKey(route)) { connection, _ in body(connection) }
    }

    /// Calls `body` with every subscriber of the route with `key` on this loop and the subscribed route, and
    /// returns how many there were (one lookup, no route text built). Subscribers may unsubscribe (be cut) from
    /// inside `body`; the iteration works on a snapshot.
    @discardableResult
    func forEachSubscriber(of key: RouteKey, _ body: (Connection, Route) -> Void) -> Int {
        guard let entry = routes[key] else { return 0 }
        switch entry.slot {
        case .one(let connection):
            body(connection, entry.route)
            return 1
        case .many(let subscribers):
            let connections = subscribers.connections
            for connection in connections { body(connection, entry.route) }
            return connections.count
        }
    }

    /// The entry of the route with `key` on this loop (its subscribed route and its subscribers), for the fan-out,
    /// which walks the subscribers itself (no closure per record). A `.many` slot's `connections` is taken as a
    /// snapshot (an array copy shares storage), so subscribers may be cut while the caller iterates it.
    func entry(of key: RouteKey) -> Entry? { routes[key] }

    /// Whether the route with `key` has a subscriber on this loop.
    func contains(_ key: RouteKey) -> Bool { routes[key] != nil }

    /// Routes with at least one subscriber on this loop.
    var routeCount: Int { routes.count }

    /// Subscriptions on this loop.
    var subscriptionCount: Int { routes.values.reduce(0) { $0 + $1.slot.count } }

    /// Subscribers per route on this loop (for inspection).
    func subscriberCounts() -> [String: Int] {
        var counts: [String: Int] = [:]
        for entry in routes.values { counts[entry.route.text] = entry.slot.count }
        return counts
    }
}

@available(*, unavailable)
extension Hub: Sendable {}
