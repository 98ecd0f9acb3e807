public import LonglinkCore

/// The client library's protocol logic without I/O: which routes the app wants, the last position seen on
/// each, deduplication, and what to send after (re)connecting. The I/O driver feeds it frames and carries
/// out what it returns; tests drive it directly.
public struct ClientSession {
    /// What the driver should do or tell the app.
    public enum Event: Hashable, Sendable {
        /// Send this frame.
        case send(ClientFrame)
        /// Tell the route's observers.
        case notify(ContentChange)
        /// The session is open.
        case connected(Connected)
        /// A publish was answered.
        case publishResult(PublishResult)
        /// A request failed (request id ≠ 0) or the server reported a connection problem.
        case error(ErrorFrame)
        /// The server refused the subscribe to `route` (permission denied, unknown line, ...); the route is no
        /// longer wanted (it is not retried on reconnect).
        case subscriptionRefused(Route, ErrorFrame)
        /// The server answered the subscribe to `route` on this connection: pushes flow from here on. `recovered`
        /// is the server's word on the gap since the last position (false for a first or a live-only subscribe).
        case subscriptionActive(Route, recovered: Bool)
        /// The server is closing the connection.
        case disconnect(Disconnect)
        /// A subscriber acked a record this client published with receipts.
        case receipt(DeliveryReceipt)
        /// The token expires soon; the app should supply a new one.
        case tokenExpiring(TokenExpiring)
    }

    /// What the client knows about one route.
    struct RouteState {
        /// Last position seen (nil before the first subscribed).
        var position: StreamPosition?
        /// The order as last known.
        var snapshot: OrderSnapshot?
        /// Whether a subscribe was answered on the current connection.
        var active = false
        /// The pending subscribe's request id on the current connection.
        var requestID: UInt32 = 0
        /// Highest offset delivered but not yet acked.
        var unackedOffset: UInt64?
        /// Join/leave events asked for.
        var presenceEvents = false
    }

    private var routes: [Route: RouteState] = [:]
    /// For line-wide subscriptions: each order's snapshot as built from the records pushed since (bounded).
    private var lineSnapshots: [Route: OrderSnapshot] = [:]
    private var connected = false
    private var nextRequestID: UInt32 = 1
    /// Token sent in `connect`.
    public var token: String
    /// Client name and version sent in `connect`.
    public let clientName: String
    public let clientVersion: String
    /// Whether pushes are acknowledged (needed for publishers' delivery receipts).
    public var sendsAcks: Bool

    public init(token: String, clientName: String = "longlink-swift", clientVersion: String = "0.1.0", sendsAcks: Bool = true) {
        self.token = token
        self.clientName = clientName
        self.clientVersion = clientVersion
        self.sendsAcks = sendsAcks
    }

    /// Routes the app wants.
    public var wantedRoutes: [Route] { routes.keys.sorted() }
    /// The last position seen on a route.
    public func position(of route: Route) -> StreamPosition? { routes[route]?.position }
    /// The last known snapshot of a route.
    public func snapshot(of route: Route) -> OrderSnapshot? { routes[route]?.snapshot }
    /// Whether the route's subscription is active on the current connection.
    public func isActive(_ route: Route) -> Bool { routes[route]?.active ?? false }

    /// A fresh request id.
    public mutating func makeRequestID() -> UInt32 {
        defer { nextRequestID = nextRequestID == UInt32.max ? 1 : nextRequestID + 1 }
        return nextRequestID
    }

    // MARK: Connection life

    /// The transport is up: send `connect`.
    /// `pingIntervalMillis` is the heartbeat interval to ask for (0: the server's default).
    public mutating func transportConnected(pingIntervalMillis: UInt64 = 0) -> [Event] {
        connected = false
        for route in routes.keys { routes[route]!.active = false }
        let connect = ConnectRequest(
            token: token, clientName: clientName, clientVersion: clientVersion, pingIntervalMillis: UInt32(clamping: pingIntervalMillis)
        )
        return [.send(.connect(connect))]
    }

    /// The connection is gone; positions are kept for the next one.
    public mutating func connectionLost() {
        connected = false
        for route in routes.keys {
            routes[route]!.active = false
            routes[route]!.unackedOffset = nil
        }
    }

    // MARK: App requests

    /// The app wants `route`; returns the subscribe to send now (nil when not connected or already wanted).
    public mutating func want(_ route: Route, presenceEvents: Bool = false) -> ClientFrame? {
        guard routes[route] == nil else { return nil }
        routes[route] = RouteState(presenceEvents: presenceEvents)
        guard connected else { return nil }
        return subscribeFrame(route)
    }

    /// The app no longer wants `route`.
    public mutating func unwant(_ route: Route) -> ClientFrame? {
        guard routes.removeValue(forKey: route) != nil, connected else { return nil }
        return .unsubscribe(UnsubscribeRequest(requestID: makeRequestID(), route: route.text))
    }

    private mutating func subscribeFrame(_ route: Route) -> ClientFrame {
        let id = makeRequestID()
        routes[route]!.requestID = id
        // A line-wide subscription is live-only (the server keeps no per-line position): never sent a position.
        let since = route.isLineWide ? nil : routes[route]!.position
        return .subscribe(SubscribeRequest(requestID: id, route: route.text, since: since, presenceEvents: routes[route]!.presenceEvents))
    }

    // MARK: Inbound frames

    /// One frame from the server.
    public mutating func receive(_ frame: ServerFrame) -> [Event] {
        switch frame {
        case .connected(let info):
            connected = true
            var events: [Event] = [.connected(info)]
            for route in routes.keys.sorted() { events.append(.send(subscribeFrame(route))) }
            return events
        case .subscribed(let subscribed):
            return didSubscribe(subscribed)
        case .unsubscribed:
            return []
        case .push(let push):
            return didPush(push)
        case .publishResult(let result):
            return [.publishResult(result)]
        case .ping:
            return [.send(.pong)]
        case .pong:
            return []
        case .error(let error):
            if error.requestID != 0, let route = routes.first(where: { $0.value.requestID == error.requestID && !$0.value.active })?.key {
                routes.removeValue(forKey: route)
                return [.subscriptionRefused(route, error)]
            }
            return [.error(error)]
        case .disconnect(let disconnect):
            return [.disconnect(disconnect)]
        case .deliveryReceipt(let receipt):
            return [.receipt(receipt)]
        case .tokenExpiring(let warning):
            return [.tokenExpiring(warning)]
        case .presenceReply, .presenceEvent:
            return []  // the driver answers presence requests and hands events to the app before the session
        }
    }

    private mutating func didSubscribe(_ subscribed: Subscribed) -> [Event] {
        guard var state = routes[subscribed.route], state.requestID == subscribed.requestID else { return [] }
        var events: [Event] = []
        let resumed = state.position != nil
        if resumed && subscribed.recovered {
            for record in subscribed.missed where isNew(record.position, after: state.position) {
                state.snapshot = Self.advance(state.snapshot, with: record)
                state.position = record.position
                events.append(.notify(ContentChange(route: subscribed.route, record: record, snapshot: state.snapshot!)))
            }
        } else if let snapshot = subscribed.snapshot, snapshot.position != state.position {
            state.snapshot = snapshot
            events.append(.notify(ContentChange(snapshot: snapshot, kind: resumed ? .resync : .snapshot)))
        }
        state.position = subscribed.position
        state.active = true
        routes[subscribed.route] = state
        events.append(.subscriptionActive(subscribed.route, recovered: resumed && subscribed.recovered))
        return events
    }

    private mutating func didPush(_ push: Push) -> [Event] {
        guard var state = routes[push.route], state.active else { return didPushOnLine(push) }
        let record = push.record
        guard isNew(record.position, after: state.position) else { return [] }
        state.snapshot = Self.advance(state.snapshot, with: record)
        state.position = record.position
        if sendsAcks { state.unackedOffset = record.position.offset }
        routes[push.route] = state
        return [.notify(ContentChange(route: push.route, record: record, snapshot: state.snapshot!))]
    }

    /// A push for an order this client follows through a line-wide subscription (`order://taxi/*`) only. Its
    /// snapshot is built from the records seen since that subscription started: fields set before it are absent
    /// until a record sets them again (read the order itself for the whole snapshot).
    private mutating func didPushOnLine(_ push: Push) -> [Event] {
        guard routes.contains(where: { $0.value.active && $0.key.lineCovers(push.route) }) else { return [] }
        let record = push.record
        if let last = lineSnapshots[push.route], !isNew(record.position, after: last.position) { return [] }
        if lineSnapshots.count >= Self.lineSnapshotLimit { lineSnapshots.removeAll(keepingCapacity: true) }
        let snapshot = Self.advance(lineSnapshots[push.route], with: record)
        lineSnapshots[push.route] = snapshot
        return [.notify(ContentChange(route: push.route, record: record, snapshot: snapshot))]
    }

    /// Orders whose line-wide snapshots are kept before the table starts over.
    static let lineSnapshotLimit = 10_000

    /// One ack per route with deliveries since the last call: the driver calls this after each read batch.
    public mutating func pendingAcks() -> [ClientFrame] {
        var frames: [ClientFrame] = []
        for (route, state) in routes {
            guard let offset = state.unackedOffset else { continue }
            routes[route]!.unackedOffset = nil
            frames.append(.ack(Ack(route: route.text, offset: offset)))
        }
        return frames
    }

    private func isNew(_ position: StreamPosition, after last: StreamPosition?) -> Bool {
        guard let last else { return true }
        return position.epoch != last.epoch || position.offset > last.offset
    }

    private static func advance(_ snapshot: OrderSnapshot?, with record: OrderChangeRecord) -> OrderSnapshot {
        snapshot?.applying(record) ?? OrderSnapshot(first: record)
    }
}
