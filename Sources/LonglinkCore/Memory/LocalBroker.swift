import Synchronization

/// The single-process broker: a published record goes straight to the registered delivery handler, on the
/// publisher's thread (the Store's writer), in publish order. With this broker only one gateway node can run;
/// several nodes need the Redis broker, which implements the same contract.
///
/// Subscriptions are reference-counted so the contract matches a networked broker (a node asks for a route
/// once, however many local clients hold it); delivery filters on them, so a record nobody on this node
/// subscribed to is not handed over at all.
public final class LocalBroker: Broker {
    private struct State {
        var handler: (any BrokerDelivery)?
        var routes: [Route: Int] = [:]
        /// Line-wide routes subscribed (`order://taxi/*`): a record of one of their lines is wanted too.
        var lineRoutes: [Route] = []
        var running = false

        func wants(_ route: Route) -> Bool {
            routes[route] != nil || (!lineRoutes.isEmpty && lineRoutes.contains { $0.lineCovers(route) })
        }
    }

    private let state = Mutex(State())

    public init() {}

    public func start(delivering handler: any BrokerDelivery) throws(BrokerError) {
        state.withLock {
            $0.handler = handler
            $0.running = true
        }
    }

    public func subscribe(_ routes: [Route]) throws(BrokerError) {
        let running = state.withLock { state in
            for route in routes {
                state.routes[route, default: 0] += 1
                if route.isLineWide && state.routes[route] == 1 { state.lineRoutes.append(route) }
            }
            return state.running
        }
        guard running else { throw .notRunning }
    }

    public func unsubscribe(_ routes: [Route]) throws(BrokerError) {
        state.withLock { state in
            for route in routes {
                guard let count = state.routes[route] else { continue }
                state.routes[route] = count > 1 ? count - 1 : nil
                if route.isLineWide && count == 1 { state.lineRoutes.removeAll { $0 == route } }
            }
        }
    }

    public func publish(_ record: OrderChangeRecord) throws(BrokerError) {
        let route = record.route
        let handler: (any BrokerDelivery)? = try state.withLock { (state) throws(BrokerError) in
            guard state.running else { throw .notRunning }
            return state.wants(route) ? state.handler : nil
        }
        handler?.brokerDidDeliver(record)
    }

    /// One lock for the whole batch; the records somebody on this node subscribed to go to the handler as one
    /// batch, in order.
    public func publish(contentsOf records: [OrderChangeRecord]) throws(BrokerError) {
        guard !records.isEmpty else { return }
        let (handler, wanted, routes): ((any BrokerDelivery)?, [OrderChangeRecord], [Route]) = try state.withLock {
            (state) throws(BrokerError) in
            guard state.running else { throw .notRunning }
            guard let handler = state.handler, !state.routes.isEmpty else { return (nil, [], []) }
            var wanted: [OrderChangeRecord] = []
            var routes: [Route] = []
            wanted.reserveCapacity(records.count)
            routes.reserveCapacity(records.count)
            for record in records {
                let route = record.route
                guard state.wants(route) else { continue }
                wanted.append(record)
                routes.append(route)
            }
            return (handler, wanted, routes)
        }
        guard let handler, !wanted.isEmpty else { return }
        handler.brokerDidDeliver(contentsOf: wanted, routes: routes)
    }

    /// Number of distinct routes this node subscribed to.
    public var subscribedRouteCount: Int { state.withLock { $0.routes.count } }

    public func shutdown() {
        state.withLock {
            $0.running = false
            $0.handler = nil
            $0.routes.removeAll()
            $0.lineRoutes.removeAll()
        }
    }
}
