public import LonglinkCore
public import LonglinkLoop
import Synchronization

/// One open client connection as the admin API lists it (`GET /admin/connections`).
public struct ConnectionInfo: Sendable, Hashable {
    /// The connection's id as sent in `connected` (`c<number>`).
    public var id: String
    /// The peer's address.
    public var address: String
    /// The authenticated user id, nil before `connect`.
    public var user: String?
    /// Subscribed routes, sorted.
    public var subscriptions: [String]
    /// Bytes waiting in its outbound queue.
    public var outboundBytes: Int
    /// Milliseconds since its last inbound byte (or its accept).
    public var lastActivityMillisAgo: UInt64
    /// Whether it arrived over TLS.
    public var tls: Bool
    /// Its transport: `tcp`, `tls`, `ws` or `wss`.
    public var transport: String = "tcp"
    /// The client software's name from `connect`.
    public var client: String
    /// The event loop serving it.
    public var loop: Int
}

/// A gateway's view at one moment, collected from every loop: its connections and per-route subscriber counts.
public struct GatewayInspection: Sendable {
    /// Every open connection.
    public var connections: [ConnectionInfo]
    /// Subscribers per route over all loops.
    public var routeSubscribers: [String: Int]
}

/// One of the gateway's client listeners, as the admin API shows it (pages find the WebSocket endpoint here).
public struct ListenerSummary: Sendable, Hashable {
    /// `tcp`, `tls`, `ws` or `wss`.
    public var transport: String
    /// The address it is bound to.
    public var host: String
    /// The bound port.
    public var port: Int
    /// The URL path (WebSocket), if any.
    public var path: String?
}

extension Gateway {
    /// The client listeners with their bound ports (empty before `start()`): the main one first.
    public var listeners: [ListenerSummary] {
        let configuration = shared.configuration
        let specs = [GatewayListener(host: configuration.host, port: configuration.port, transport: configuration.transport)]
            + configuration.additionalListeners
        return specs.enumerated().compactMap { index, spec in
            let port = port(ofListener: index)
            guard port > 0 else { return nil }
            return ListenerSummary(transport: spec.transport.name, host: spec.host, port: port, path: spec.transport.path)
        }
    }

    /// The gateway's event loops (empty before `start()`). The operations listener runs on the first one.
    public var eventLoops: [EventLoop] { shared.loopGateways.withLock { $0.map(\.bound.loop) } }

    /// Collects every loop's connections and route counts (each loop answers on its own thread through
    /// `execute`); `completion` runs once, on the last loop to answer, or at once when no loop runs.
    public func inspect(_ completion: @escaping @Sendable (GatewayInspection) -> Void) {
        let ports = shared.loopGateways.withLock { $0 }
        guard !ports.isEmpty else { return completion(GatewayInspection(connections: [], routeSubscribers: [:])) }
        let collector = InspectionCollector(expected: ports.count, completion: completion)
        for port in ports {
            let bound = port.bound
            let posted = bound.loop.execute { _ in
                guard let gateway = bound.object else { return collector.add([], [:]) }
                collector.add(gateway.connectionInfos(), gateway.hub.subscriberCounts())
            }
            if !posted { collector.add([], [:]) }
        }
    }

    /// Disconnects client `clientID` (`c<number>`) with a numbered code; `completion(false)` when no such client is
    /// open. The disconnect frame goes out before the close, like every other disconnect.
    public func disconnect(
        clientID: String,
        code: DisconnectCode,
        reason: String,
        completion: @escaping @Sendable (Bool) -> Void
    ) {
        guard clientID.hasPrefix("c"), let id = UInt64(clientID.dropFirst()) else { return completion(false) }
        let loopID = Int(id & 63)  // ids are serial << 6 | loop id (LoopGateway.accept)
        let ports = shared.loopGateways.withLock { $0 }
        guard loopID < ports.count else { return completion(false) }
        let bound = ports[loopID].bound
        let posted = bound.loop.execute { _ in
            guard let gateway = bound.object, let connection = gateway.connections[id], !connection.isClosed
            else { return completion(false) }
            gateway.shared.logger.notice(
                "admin disconnect \(code)",
                [("conn", connection.clientID), ("user", connection.peer.principal?.userID ?? "-")]
            )
            connection.perform(connection.peer.disconnect(code, reason: reason))
            completion(true)
        }
        if !posted { completion(false) }
    }
}

extension LoopGateway {
    /// This loop's connections as the admin API shows them.
    func connectionInfos() -> [ConnectionInfo] {
        let now = nowMillis
        return connections.values.filter { !$0.isClosed }.map { connection in
            ConnectionInfo(
                id: connection.clientID,
                address: connection.remoteAddress,
                user: connection.peer.principal?.userID,
                subscriptions: connection.peer.subscribedRoutes.map(\.text).sorted(),
                outboundBytes: connection.queuedBytes,
                lastActivityMillisAgo: now &- min(now, connection.lastActivityMillis),
                tls: connection.isTLS,
                transport: connection.transportName.text,
                client: connection.peer.clientName,
                loop: context.eventLoop.id
            )
        }
    }
}

/// Gathers the answers of every loop and calls the completion once all have answered.
private final class InspectionCollector: Sendable {
    private struct State {
        var connections: [ConnectionInfo] = []
        var routes: [String: Int] = [:]
        var answered = 0
    }

    private let expected: Int
    private let completion: @Sendable (GatewayInspection) -> Void
    private let state = Mutex(State())

    init(expected: Int, completion: @escaping @Sendable (GatewayInspection) -> Void) {
        self.expected = expected
        self.completion = completion
    }

    func add(_ connections: [ConnectionInfo], _ routes: [String: Int]) {
        let done = state.withLock { state -> GatewayInspection? in
            state.connections += connections
            state.routes.merge(routes, uniquingKeysWith: +)
            state.answered += 1
            guard state.answered == expected else { return nil }
            return GatewayInspection(connections: state.connections, routeSubscribers: state.routes)
        }
        if let done { completion(done) }
    }
}
