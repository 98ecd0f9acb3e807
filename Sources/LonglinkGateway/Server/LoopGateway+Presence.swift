public import LonglinkCore
import Synchronization
import LonglinkLoop

/// Presence on one loop: subscriptions register in the node's `PresenceStore`, `presence` requests are answered
/// from it, and join/leave events go to this node's subscribers of the route that asked for them (on every loop),
/// unless the route is over the counts-only threshold.
extension LoopGateway {
    /// The presence member of `connection` (user from its token, client name from `connect`).
    func presenceMember(_ connection: Connection) -> PresenceMember {
        PresenceMember(
            userID: connection.peer.principal?.userID ?? "-",
            clientName: connection.peer.clientName,
            connectionID: connection.clientID,
            sinceMillis: wallMillis,
            nodeID: shared.configuration.peer.nodeID
        )
    }

    func presenceJoined(_ connection: Connection, _ route: Route) {
        let member = presenceMember(connection)
        shared.presence.joined(route, member)
        if connection.peer.wantsPresenceEvents(on: route),
            presenceListeners.insert(PresenceListener(connection: connection.id, route: route)).inserted
        {
            shared.presenceListenerCount.add(1, ordering: .relaxed)
            shared.presence.watchEvents(route)
        }
        announcePresence(route, joined: true, member: member)
    }

    func presenceLeft(_ connection: Connection, _ route: Route) {
        shared.presence.left(route, connectionID: connection.clientID)
        if presenceListeners.remove(PresenceListener(connection: connection.id, route: route)) != nil {
            shared.presenceListenerCount.subtract(1, ordering: .relaxed)
            shared.presence.unwatchEvents(route)
        }
        announcePresence(route, joined: false, member: presenceMember(connection))
    }

    /// Hands a join/leave to every loop (each sends it to its own subscribers of `route` that want events). Costs
    /// nothing while no subscription on this node asked for events, or the route is over the counts-only threshold.
    private func announcePresence(_ route: Route, joined: Bool, member: PresenceMember) {
        guard shared.presenceListenerCount.load(ordering: .relaxed) > 0,
            shared.presence.localCount(of: route) <= shared.presence.countsOnlyAbove
        else { return }
        let event = PresenceEvent(route: route, joined: joined, member: member)
        for port in shared.loopGateways.withLock({ $0 }) {
            port.bound.execute { $0.deliverPresenceEvent(event) }
        }
    }

    /// Sends `event` to this loop's subscribers of its route that asked for presence events (not to its subject).
    func deliverPresenceEvent(_ event: PresenceEvent) {
        hub.forEachSubscriber(of: event.route) { connection in
            guard !connection.isClosed, connection.clientID != event.member.connectionID,
                connection.peer.wantsPresenceEvents(on: event.route)
            else { return }
            connection.send(.presenceEvent(event))
        }
    }

    /// Answers a `presence` request with every member over every node (counts only above the threshold).
    func presence(of route: Route, for connection: Connection, requestID: UInt32) {
        let bound = self.bound
        let connectionID = connection.id
        let threshold = shared.presence.countsOnlyAbove
        shared.presence.presence(of: route) { result in
            let frame: ServerFrame
            switch result {
            case .success(let members):
                frame = .presenceReply(PresenceReply(requestID: requestID, route: route, members: members, countsOnlyAbove: threshold))
            case .failure(let error):
                frame = .error(ErrorFrame(requestID: requestID, code: .unavailable, message: "\(error)"))
            }
            bound.execute { gateway in
                guard let connection = gateway.connections[connectionID], !connection.isClosed else { return }
                connection.send(frame)
            }
        }
    }
}

extension Gateway {
    /// Who is subscribed to `route` over every node (the admin API's presence endpoint).
    public func presence(of route: Route, completion: @escaping @Sendable (Result<PresenceReply, PresenceError>) -> Void) {
        let threshold = shared.presence.countsOnlyAbove
        shared.presence.presence(of: route) { result in
            completion(result.map { PresenceReply(requestID: 0, route: route, members: $0, countsOnlyAbove: threshold) })
        }
    }
}

/// One subscription that asked for presence events.
struct PresenceListener: Hashable {
    let connection: UInt64
    let route: Route
}
