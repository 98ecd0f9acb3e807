import Synchronization

/// The single-process broker: a published record goes straight to the registered delivery handler, on the
/// publisher's thread (the Store's writer), in publish order. With this broker only one gateway node can run;
/// several nodes need the Redis broker, which implements the same contract.
///
/// Subscriptions are reference-counted so the contract matches a networked broker (a node asks for a route
/// once, however many local clients hold it); delivery filters on them, so a record nobody on this node
/// subscribed to is not handed over at all. The counts are kept by each route's `RouteKey.filterDigest` (8 bytes
/// a route instead of a 56-byte key: this table holds every route of the node, and memory per connection is a
/// budget); two routes would share a count only by a 64-bit collision, and then a record of the other would be
/// handed over too, which the gateway's hub drops.
public final class LocalBroker: Broker {
    private struct State {
        var handler: (any BrokerDelivery)?
        /// Subscriptions per route, keyed by the digest of the route's parts, so a record is looked up without
        /// building its route's text.
        var routes = DigestMap<Int>()
        /// Line-wide routes subscribed (`order://taxi/*`): a record of one of their lines is wanted too.
        var lineRoutes = 0
        var running = false

        func wants(_ record: OrderChangeRecord) -> Bool {
            routes[RouteKey.filterDigest(of: record)] != nil
                || (lineRoutes > 0 && routes[RouteKey.lineWideFilterDigest(of: record)] != nil)
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
                let key = RouteKey(route)
                let count = (state.routes[key.filterDigest] ?? 0) + 1
                state.routes[key.filterDigest] = count
                if key.isLineWide && count == 1 { state.lineRoutes += 1 }
            }
            return state.running
        }
        guard running else { throw .notRunning }
    }

    public func unsubscribe(_ routes: [Route]) throws(BrokerError) {
        state.withLock { state in
            for route in routes {
                let key = RouteKey(route)
                guard let count = state.routes[key.filterDigest] else { continue }
                state.routes[key.filterDigest] = count > 1 ? count - 1 : nil
                if key.isLineWide && count == 1 { state.lineRoutes -= 1 }
            }
        }
    }

    public func publish(_ record: OrderChangeRecord) throws(BrokerError) {
        let handler: (any BrokerDelivery)? = try state.withLock { (state) throws(BrokerError) in
            guard state.running else { throw .notRunning }
            return state.wants(record) ? state.handler : nil
        }
        handler?.brokerDidDeliver(record)
    }

    /// One lock for the whole batch; the records somebody on this node subscribed to go to the handler as one
    /// batch, in order (the batch itself when every record is wanted: no copy). No route text is built.
    public func publish(contentsOf records: [OrderChangeRecord]) throws(BrokerError) {
        guard !records.isEmpty else { return }
        let (handler, wanted): ((any BrokerDelivery)?, [OrderChangeRecord]) = try state.withLock {
            (state) throws(BrokerError) in
            guard state.running else { throw .notRunning }
            guard let handler = state.handler, !state.routes.isEmpty else { return (nil, []) }
            // Most batches are wanted whole: copy only from the first record nobody wants.
            var index = 0
            while index < records.count && state.wants(records[index]) { index += 1 }
            if index == records.count { return (handler, records) }
            var wanted = Array(records[..<index])
            for record in records[(index + 1)...] where state.wants(record) { wanted.append(record) }
            return (handler, wanted)
        }
        guard let handler, !wanted.isEmpty else { return }
        handler.brokerDidDeliver(contentsOf: wanted)
    }

    /// Number of distinct routes this node subscribed to.
    public var subscribedRouteCount: Int { state.withLock { $0.routes.count } }

    public func shutdown() {
        state.withLock {
            $0.running = false
            $0.handler = nil
            $0.routes.removeAll()
            $0.lineRoutes = 0
        }
    }
}
