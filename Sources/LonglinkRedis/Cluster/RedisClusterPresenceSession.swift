import LonglinkCore
import LonglinkLoop
import Synchronization

/// `RedisClusterPresence` on its loop: the cluster client, the refresh of this node's fields every `ttl / 3`,
/// writing dirty routes, reading presence and publishing events. Each script touches one route's slot.
/// Loop-confined; the client blocks this loop (its own) for at most a command timeout.
final class RedisClusterPresenceSession {
    private let configuration: RedisClusterPresence.Configuration
    private let local: LocalPresence
    private let dirty: DirtyRoutes
    private let context: LoopContext
    private var client: RedisClusterClient?
    /// Watched routes and how many subscriptions of this node asked for their events.
    private var watched: [Route: Int] = [:]
    /// Routes this node wrote a field for (to delete them on shutdown).
    private var written: Set<Route> = []
    private var closed = false
    private var lastFailure: String?
    private var logger: Logger { configuration.logger }

    /// Writes this node's field: the deadline (the server's `TIME` plus ARGV[2] ms), a newline, the members; and
    /// keeps the hash alive at least as long.
    static let writeScript = """
        local t = redis.call('TIME')
        local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        local ttl = tonumber(ARGV[2])
        redis.call('HSET', KEYS[1], ARGV[1], string.format('%d', now + ttl) .. '\\n' .. ARGV[3])
        if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
        return 1
        """

    /// Returns the fields whose deadline has not passed, deleting the others.
    static let readScript = """
        local t = redis.call('TIME')
        local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        local fields = redis.call('HGETALL', KEYS[1])
        local out = {}
        for i = 1, #fields, 2 do
          local value = fields[i + 1]
          local newline = string.find(value, '\\n', 1, true)
          local deadline = tonumber(string.sub(value, 1, (newline or (#value + 1)) - 1))
          if deadline and deadline > now then
            out[#out + 1] = value
          else
            redis.call('HDEL', KEYS[1], fields[i])
          end
        end
        return out
        """

    /// Publishes an event on the route's shard channel only when some node watches the route.
    static let publishScript = "if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('SPUBLISH', ARGV[1], ARGV[2]) end return 0"

    init(configuration: RedisClusterPresence.Configuration, local: LocalPresence, dirty: DirtyRoutes, context: LoopContext) {
        self.configuration = configuration
        self.local = local
        self.dirty = dirty
        self.context = context
    }

    private func key(_ route: Route) -> String { RedisKeys.presenceKey("p", route, prefix: configuration.prefix) }
    private func watchKey(_ route: Route) -> String { RedisKeys.presenceKey("pw", route, prefix: configuration.prefix) }
    func eventChannel(_ route: Route) -> String { RedisKeys.presenceKey("pe", route, prefix: configuration.prefix) }

    func start() {
        refresh()
    }

    func close() {
        closed = true
        client?.close()
        client = nil
    }

    /// The client, connected when there is none (nil while the cluster is unreachable).
    private func connected() -> RedisClusterClient? {
        if let client { return client }
        do {
            client = try RedisClusterClient(configuration.address, password: configuration.password, timeout: .seconds(1))
            if lastFailure != nil { logger.notice("Redis Cluster presence: connected to \(configuration.address)") }
            lastFailure = nil
        } catch {
            let why = "\(error)"
            if lastFailure != why { logger.warning("Redis Cluster presence: \(configuration.address) unreachable: \(why); retrying") }
            lastFailure = why
        }
        return client
    }

    /// Runs requests (pipelined per master); one result per request.
    private func run(_ requests: [RedisClusterClient.Request]) -> [Result<[RedisReply], RedisError>] {
        guard !requests.isEmpty else { return [] }
        guard let client = connected() else { return requests.map { _ in .failure(.cluster(lastFailure ?? "unreachable")) } }
        return client.execute(requests)
    }

    private func request(_ key: String, _ command: [String], replayable: Bool = false) -> RedisClusterClient.Request {
        RedisClusterClient.Request(slot: RedisClusterSlot.of(key), commands: [command.map { Array($0.utf8) }], replayable: replayable)
    }

    private func writeRequest(_ route: Route, _ members: [PresenceMember]) -> RedisClusterClient.Request {
        let key = key(route)
        if members.isEmpty { return request(key, ["HDEL", key, configuration.nodeID]) }
        return request(
            key,
            ["EVAL", Self.writeScript, "1", key, configuration.nodeID, "\(max(1, milliseconds(configuration.ttl)))", RedisPresenceSession.encode(members)]
        )
    }

    /// Rewrites every field of this node (new deadlines) and every watch key; runs every `ttl / 3`.
    private func refresh() {
        guard !closed else { return }
        let routes = Array(local.routesWithMembers)
        var requests = routes.map { writeRequest($0, local.members(of: $0)) }
        let ttl = "\(max(1, milliseconds(configuration.ttl)))"
        requests += watched.keys.map { route in request(watchKey(route), ["SET", watchKey(route), "1", "PX", ttl]) }
        let results = run(requests)
        for (route, result) in zip(routes, results) {
            if case .success = result { written.insert(route) }
        }
        if let failure = results.first(where: { if case .failure = $0 { true } else { false } }), case .failure(let error) = failure {
            logger.warning("Redis Cluster presence: refresh failed: \(error)")
        }
        context.schedule(after: configuration.ttl / 3) { [weak self] in self?.refresh() }
    }

    /// Writes this node's members of every dirty route (the write script or, when none are left, `HDEL`).
    func flush() {
        let routes = dirty.state.withLock { state -> [Route] in
            state.scheduled = false
            defer { state.routes.removeAll() }
            return Array(state.routes)
        }
        guard !closed, !routes.isEmpty else { return }
        let members = routes.map { local.members(of: $0) }
        let results = run(zip(routes, members).map { writeRequest($0, $1) })
        for (index, result) in results.enumerated() {
            guard case .success = result else { continue }
            if members[index].isEmpty { written.remove(routes[index]) } else { written.insert(routes[index]) }
        }
    }

    /// Every member of `route`: other nodes' live fields from the cluster, this node's from memory.
    func read(_ route: Route) -> Result<[PresenceMember], PresenceError> {
        let key = key(route)
        guard let result = run([request(key, ["EVAL", Self.readScript, "1", key], replayable: true)]).first else {
            return .failure(.unavailable("no reply"))
        }
        switch result {
        case .failure(let error):
            return .failure(.unavailable("\(error)"))
        case .success(let replies):
            if case .error(let message)? = replies.first { return .failure(.unavailable(message)) }
            var members: [PresenceMember] = []
            for blob in replies.first?.array ?? [] {
                guard let text = blob.string else { continue }
                let decoded = RedisPresenceSession.decode(text)
                // This node's own entries come from memory (they may be newer than the last write).
                if decoded.first?.nodeID == configuration.nodeID { continue }
                members += decoded
            }
            return .success(members + local.members(of: route))
        }
    }

    /// Clean shutdown: deletes this node's fields.
    func removeAll() {
        let routes = written.union(local.routesWithMembers)
        _ = run(routes.map { request(key($0), ["HDEL", key($0), configuration.nodeID]) })
    }

    // MARK: Join/leave events

    func publish(_ route: Route, joined: Bool, _ member: PresenceMember) {
        let watch = watchKey(route)
        _ = run([
            request(watch, ["EVAL", Self.publishScript, "1", watch, eventChannel(route), (joined ? "J\n" : "L\n") + RedisPresenceSession.encode([member])])
        ])
    }

    /// Counts a watch; true when it is the route's first (subscribe its event channel).
    func watch(_ route: Route) -> Bool {
        watched[route, default: 0] += 1
        guard watched[route] == 1 else { return false }
        let watch = watchKey(route)
        _ = run([request(watch, ["SET", watch, "1", "PX", "\(max(1, milliseconds(configuration.ttl)))"])])
        return true
    }

    /// Counts an unwatch; true when it was the route's last (unsubscribe its event channel).
    func unwatch(_ route: Route) -> Bool {
        guard let count = watched[route] else { return false }
        if count > 1 {
            watched[route] = count - 1
            return false
        }
        watched[route] = nil
        return true
    }
}

@available(*, unavailable)
extension RedisClusterPresenceSession: Sendable {}

/// Whole milliseconds of a duration.
private func milliseconds(_ duration: Duration) -> Int64 {
    let (seconds, attoseconds) = duration.components
    return seconds * 1000 + attoseconds / 1_000_000_000_000_000
}
