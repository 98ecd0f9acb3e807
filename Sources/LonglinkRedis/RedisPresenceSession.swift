import LonglinkCore
import LonglinkLoop
import Synchronization

/// `RedisPresence` on its loop: the connection, the live-key refresh, writing dirty routes and reading presence.
/// Loop-confined.
final class RedisPresenceSession {
    private let configuration: RedisPresence.Configuration
    private let local: LocalPresence
    private let dirty: DirtyRoutes
    private let context: LoopContext
    private var connection: RedisConnection?
    /// Subscribed to the event channels of watched routes (`PREFIX:pe:<route>`).
    private var events: RedisConnection?
    /// Watched routes and how many subscriptions of this node asked for their events.
    private var watched: [Route: Int] = [:]
    private let remote: @Sendable (PresenceEvent) -> Void
    private var ready = false
    private var closed = false
    private var refreshTimer: TimerID?
    /// Routes this node wrote a field for (to delete them on shutdown).
    private var written: Set<Route> = []
    private var logger: Logger { configuration.logger }

    /// Reads the hash and keeps the fields of nodes whose live key exists, deleting the others' fields.
    static let readScript = """
        local fields = redis.call('HGETALL', KEYS[1])
        local out = {}
        for i = 1, #fields, 2 do
          if redis.call('EXISTS', ARGV[1] .. fields[i]) == 1 then
            out[#out + 1] = fields[i + 1]
          else
            redis.call('HDEL', KEYS[1], fields[i])
          end
        end
        return out
        """

    init(
        configuration: RedisPresence.Configuration,
        local: LocalPresence,
        dirty: DirtyRoutes,
        context: LoopContext,
        remote: @escaping @Sendable (PresenceEvent) -> Void
    ) {
        self.remote = remote
        self.configuration = configuration
        self.local = local
        self.dirty = dirty
        self.context = context
    }

    private var liveKey: String { "\(configuration.prefix):pn:\(configuration.nodeID)" }
    private func key(_ route: Route) -> String { "\(configuration.prefix):p:\(route.text)" }

    func connect() {
        guard !closed else { return }
        do {
            let address = configuration.address
            let socketAddress = try SocketAddress.resolve(host: address.host, port: address.port).first
                ?? SocketAddress(ipAddress: address.host, port: address.port)
            let connection = try RedisConnection(address: socketAddress, on: context)
            let events = try RedisConnection(address: socketAddress, on: context)
            self.connection = connection
            self.events = events
            connection.onClose = { [weak self] error in self?.lost(error) }
            events.onClose = { [weak self] error in self?.lost(error) }
            events.onMessage = { [weak self] channel, payload in self?.received(channel, payload) }
            if let password = configuration.password {
                connection.send(["AUTH", password])
                events.send(["AUTH", password])
            }
            let channels = watched.keys.map(eventChannel)
            if !channels.isEmpty { events.subscribe(channels) }
            connection.send(["PING"]) { [weak self] result in
                guard let self, case .success = result else { return }
                self.ready = true
                self.refresh()
                // Everything this node holds is written again (after a reconnect Redis may have lost it).
                self.dirty.state.withLock { $0.routes.formUnion(self.local.routesWithMembers) }
                self.flush()
            }
        } catch {
            lost(.connect("\(error)"))
        }
    }

    private func lost(_ error: RedisError?) {
        guard !closed else { return }
        ready = false
        connection?.close()
        connection = nil
        events?.close()
        events = nil
        if let refreshTimer { _ = context.cancel(refreshTimer) }
        refreshTimer = nil
        logger.warning("Redis presence: \(configuration.address) \(error.map { "\($0)" } ?? "closed"); retrying in 500 ms")
        context.schedule(after: .milliseconds(500)) { [weak self] in self?.connect() }
    }

    /// Keeps the live key for one more `ttl`; runs every `ttl / 3`.
    private func refresh() {
        guard ready, let connection else { return }
        let ttl = milliseconds(configuration.ttl)
        connection.send(["SET", liveKey, "1", "PX", "\(max(1, ttl))"])
        for route in watched.keys { markWatched(route) }
        refreshTimer = context.schedule(after: configuration.ttl / 3) { [weak self] in self?.refresh() }
    }

    /// Writes this node's members of every dirty route (`HSET` or, when none are left, `HDEL`).
    func flush() {
        let routes = dirty.state.withLock { state -> Set<Route> in
            state.scheduled = false
            guard ready else { return [] }
            defer { state.routes.removeAll() }
            return state.routes
        }
        guard let connection, !routes.isEmpty else { return }
        for route in routes {
            let members = local.members(of: route)
            if members.isEmpty {
                connection.send(["HDEL", key(route), configuration.nodeID])
                written.remove(route)
            } else {
                connection.send(["HSET", key(route), configuration.nodeID, Self.encode(members)])
                written.insert(route)
            }
        }
    }

    func read(_ route: Route, completion: @escaping @Sendable (Result<[PresenceMember], PresenceError>) -> Void) {
        guard ready, let connection else {
            return completion(.failure(.unavailable("Redis at \(configuration.address) is unreachable")))
        }
        connection.send(["EVAL", Self.readScript, "1", key(route), "\(configuration.prefix):pn:"]) { [nodeID = configuration.nodeID, local] result in
            switch result {
            case .failure(let error):
                completion(.failure(.unavailable("\(error)")))
            case .success(let reply):
                var members: [PresenceMember] = []
                for blob in reply.array ?? [] {
                    guard let text = blob.string else { continue }
                    let decoded = Self.decode(text)
                    // This node's own entries come from memory (they may be newer than the last flush).
                    if decoded.first?.nodeID == nodeID { continue }
                    members += decoded
                }
                completion(.success(members + local.members(of: route)))
            }
        }
    }

    /// Clean shutdown: deletes this node's fields and its live key, then calls `done`.
    func removeAll(_ done: @escaping () -> Void) {
        guard ready, let connection else { return done() }
        for route in written.union(local.routesWithMembers) {
            connection.send(["HDEL", key(route), configuration.nodeID])
        }
        connection.send(["DEL", liveKey]) { _ in done() }
    }

    func close() {
        closed = true
        ready = false
        connection?.close()
        connection = nil
        events?.close()
        events = nil
    }

    // MARK: Join/leave events between nodes

    private func eventChannel(_ route: Route) -> String { "\(configuration.prefix):pe:\(route.text)" }

    /// `PREFIX:pw:<route>`: exists while some node watches the route's events (each watching node refreshes it with
    /// its live key; it expires `ttl` after the last one stopped).
    private func watchKey(_ route: Route) -> String { "\(configuration.prefix):pw:\(route.text)" }

    /// Publishes an event only when some node watches the route: joins and leaves nobody asked about cost one
    /// `EVAL` and no message.
    static let publishScript = "if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('PUBLISH', ARGV[1], ARGV[2]) end return 0"

    func publish(_ route: Route, joined: Bool, _ member: PresenceMember) {
        guard ready, let connection else { return }
        connection.send([
            "EVAL", Self.publishScript, "1", watchKey(route), eventChannel(route),
            (joined ? "J\n" : "L\n") + Self.encode([member]),
        ])
    }

    func watch(_ route: Route) {
        watched[route, default: 0] += 1
        guard watched[route] == 1 else { return }
        markWatched(route)
        events?.subscribe([eventChannel(route)])
    }

    private func markWatched(_ route: Route) {
        connection?.send(["SET", watchKey(route), "1", "PX", "\(max(1, milliseconds(configuration.ttl)))"])
    }

    func unwatch(_ route: Route) {
        guard let count = watched[route] else { return }
        if count > 1 {
            watched[route] = count - 1
            return
        }
        watched[route] = nil
        events?.unsubscribe([eventChannel(route)])
    }

    /// An event from a node (this node's own are skipped: its loops announced them already).
    private func received(_ channel: UnsafeRawBufferPointer, _ payload: UnsafeRawBufferPointer) {
        let prefix = "\(configuration.prefix):pe:"
        let name = String(decoding: channel, as: UTF8.self)
        guard name.hasPrefix(prefix), let route = try? Route(parsingSubscription: String(name.dropFirst(prefix.count))) else { return }
        let text = String(decoding: payload, as: UTF8.self)
        guard text.count > 2, let member = Self.decode(String(text.dropFirst(2))).first, member.nodeID != configuration.nodeID else { return }
        remote(PresenceEvent(route: route, joined: text.hasPrefix("J"), member: member))
    }

    // MARK: Encoding: one member per line, fields separated by tabs (tabs and newlines in names become spaces).

    static func encode(_ members: [PresenceMember]) -> String {
        func clean(_ text: String) -> String {
            String(text.map { $0 == "\t" || $0 == "\n" || $0 == "\r" ? " " : $0 })
        }
        return members.map {
            "\(clean($0.connectionID))\t\(clean($0.userID))\t\(clean($0.clientName))\t\($0.sinceMillis)\t\(clean($0.nodeID))"
        }.joined(separator: "\n")
    }

    static func decode(_ text: String) -> [PresenceMember] {
        text.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard parts.count == 5, let since = UInt64(parts[3]) else { return nil }
            return PresenceMember(
                userID: String(parts[1]), clientName: String(parts[2]), connectionID: String(parts[0]),
                sinceMillis: since, nodeID: String(parts[4])
            )
        }
    }
}

@available(*, unavailable)
extension RedisPresenceSession: Sendable {}

/// Whole milliseconds of a duration.
private func milliseconds(_ duration: Duration) -> Int64 {
    let (seconds, attoseconds) = duration.components
    return seconds * 1000 + attoseconds / 1_000_000_000_000_000
}
