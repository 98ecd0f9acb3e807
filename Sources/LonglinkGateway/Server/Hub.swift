import LonglinkCore

/// One loop's index of who listens to what: route → the connections subscribed on this loop.
///
/// Loop-confined, like everything a loop owns; each loop has its own hub, so fan-out takes no lock (centrifuge
/// shards its hub for the same reason). Removal is O(1) by swapping with the last subscriber, so a broadcast
/// route with thousands of subscribers survives a mass disconnect.
final class Hub {
    /// The connections subscribed to one route, with each one's index for O(1) removal.
    final class Subscribers {
        private(set) var connections: [Connection] = []
        private var indexes: [ObjectIdentifier: Int] = [:]

        var isEmpty: Bool { connections.isEmpty }
        var count: Int { connections.count }

        func add(_ connection: Connection) {
            let key = ObjectIdentifier(connection)
            guard indexes[key] == nil else { return }
            indexes[key] = connections.count
            connections.append(connection)
        }

        func remove(_ connection: Connection) {
            guard let index = indexes.removeValue(forKey: ObjectIdentifier(connection)) else { return }
            let last = connections.removeLast()
            if index < connections.count {
                connections[index] = last
                indexes[ObjectIdentifier(last)] = index
            }
        }
    }

    private var routes: [Route: Subscribers] = [:]

    /// Adds a subscriber; returns true when it is the route's first on this loop (ask the broker for it).
    func add(_ connection: Connection, to route: Route) -> Bool {
        if let subscribers = routes[route] {
            subscribers.add(connection)
            return false
        }
        let subscribers = Subscribers()
        subscribers.add(connection)
        routes[route] = subscribers
        return true
    }

    /// Removes a subscriber; returns true when the route has no subscriber left on this loop.
    func remove(_ connection: Connection, from route: Route) -> Bool {
        guard let subscribers = routes[route] else { return false }
        subscribers.remove(connection)
        guard subscribers.isEmpty else { return false }
        routes[route] = nil
        return true
    }

    /// The subscribers of a route (nil when none on this loop).
    func subscribers(of route: Route) -> Subscribers? { routes[route] }

    /// Routes with at least one subscriber on this loop.
    var routeCount: Int { routes.count }

    /// Subscriptions on this loop.
    var subscriptionCount: Int { routes.values.reduce(0) { $0 + $1.count } }

    /// Subscribers per route on this loop (for inspection).
    func subscriberCounts() -> [String: Int] {
        var counts: [String: Int] = [:]
        for (route, subscribers) in routes { counts[route.text] = subscribers.count }
        return counts
    }
}

@available(*, unavailable)
extension Hub: Sendable {}
