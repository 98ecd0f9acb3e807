import LonglinkCore
import LonglinkLoop
import Synchronization

/// The cluster broker's view of the cluster: reading the slot map, one link per master, losing and regaining them.
extension RedisClusterBrokerSession {
    /// Reads the slot map with `CLUSTER SLOTS`, asking known masters, their replicas, then the seeds, one after
    /// the other until one answers; retries after the back-off when none does.
    func refreshMap() {
        guard !closed else { return }
        guard !refreshing else {
            refreshScheduled = false
            return scheduleRefresh(after: .milliseconds(200))
        }
        refreshing = true
        status.refreshes.add(1, ordering: .relaxed)
        var candidates = map.masters
        for shard in map.shards { candidates += shard.replicas.filter { !candidates.contains($0) } }
        candidates += configuration.address.seeds.filter { !candidates.contains($0) }
        ask(candidates, from: 0, lastError: "no seed")
    }

    private func ask(_ candidates: [RedisAddress], from index: Int, lastError: String) {
        guard !closed else { return }
        guard index < candidates.count else {
            refreshing = false
            let delay = nextBackoff()
            logger.warning("Redis Cluster broker: cannot read the slot map (\(lastError)); retrying in \(delay)")
            return scheduleRefresh(after: delay)
        }
        let node = candidates[index]
        let connection: RedisConnection
        do {
            connection = try RedisConnection(address: try Self.socketAddress(node), on: context)
        } catch {
            return ask(candidates, from: index + 1, lastError: "\(node): \(error)")
        }
        var answered = false
        if let password = configuration.password { connection.send(["AUTH", password]) }
        connection.send(["CLUSTER", "SLOTS"]) { [weak self] result in
            guard let self, !answered else { return }
            answered = true
            self.context.enqueue { connection.close() }
            switch result {
            case .success(let reply):
                do {
                    let fresh = try RedisClusterSlotMap(slots: reply, queried: node)
                    guard !fresh.masters.isEmpty else { throw RedisError.cluster("\(node) serves no slots") }
                    self.refreshing = false
                    self.logger.debug("Redis Cluster broker: slot map from \(node): masters \(fresh.masters.map(\.port))")
                    self.adopt(fresh)
                } catch {
                    self.ask(candidates, from: index + 1, lastError: "\(node): \(error)")
                }
            case .failure(let error):
                self.ask(candidates, from: index + 1, lastError: "\(node): \(error)")
            }
        }
        // A node that accepts but never answers must not stall the refresh.
        context.schedule(after: .seconds(2)) { if !answered { connection.close() } }
    }

    /// Takes a new slot map: links to every master, closes links to nodes that are no longer masters (their
    /// channels are placed again), and places the channels waiting for a master.
    private func adopt(_ fresh: RedisClusterSlotMap) {
        map = fresh
        status.mapKnown.store(true, ordering: .releasing)
        for master in fresh.masters { _ = ensureLink(master) }
        for (address, link) in links where !fresh.masters.contains(address) {
            linkLost(link, RedisError.cluster("\(address) no longer serves slots"))
        }
        moveMisplacedChannels()
        placeWaiting()
        updateConnected()
    }

    /// The link to `master`, opened when there is none.
    func ensureLink(_ master: RedisAddress) -> RedisClusterNodeLink {
        if let link = links[master] { return link }
        let link = RedisClusterNodeLink(address: master, context: context, password: configuration.password)
        links[master] = link
        link.open(
            ready: { [weak self, weak link] in if let self, let link { self.linkReady(link) } },
            lost: { [weak self, weak link] error in if let self, let link { self.linkLost(link, error) } },
            message: { [weak self] channel, payload in self?.receive(channel, payload) },
            dropped: { [weak self] channel in self?.dropped(String(decoding: channel, as: UTF8.self), by: master) }
        )
        return link
    }

    private func linkReady(_ link: RedisClusterNodeLink) {
        guard !closed, links[link.address] === link else { return }
        placeWaiting()
        updateConnected()
        if status.connected.load(ordering: .relaxed) { backoff = configuration.initialBackoff }
    }

    /// A master's connection dropped (or it stopped being a master): its channels wait for the slot map to name
    /// their slots' masters again, and are `missed` if they were active.
    func linkLost(_ link: RedisClusterNodeLink, _ error: RedisError?) {
        guard !closed, links[link.address] === link else { return }
        links[link.address] = nil
        link.close()
        var affected = 0
        for (name, channel) in channels where channel.node == link.address {
            var changed = channel
            if changed.active {
                changed.active = false
                changed.missed = true
                status.activeChannels.subtract(1, ordering: .relaxed)
                affected += 1
            }
            changed.sent = false
            changed.node = nil
            channels[name] = changed
        }
        updateConnected()
        let delay = nextBackoff()
        logger.warning(
            "Redis Cluster broker: lost \(link.address) (\(error.map { "\($0)" } ?? "closed")); \(affected) channels wait for "
                + "their slots' master; reading the slot map again in \(delay)"
        )
        scheduleRefresh(after: delay)
    }

    /// Reads the slot map after `delay` (once, however often asked meanwhile).
    func scheduleRefresh(after delay: Duration = .milliseconds(50)) {
        guard !closed, !refreshScheduled else { return }
        refreshScheduled = true
        context.schedule(after: delay) { [weak self] in
            guard let self else { return }
            self.refreshScheduled = false
            self.refreshMap()
        }
    }

    /// The current back-off with jitter (half to all of it), doubling it for next time.
    private func nextBackoff() -> Duration {
        let millis = max(2, Self.milliseconds(backoff))
        backoff = min(backoff * 2, configuration.maxBackoff)
        return .milliseconds(millis / 2 + Int64.random(in: 0...(millis / 2)))
    }

    private func updateConnected() {
        let connected = !map.masters.isEmpty && map.coversEverySlot && map.masters.allSatisfy { links[$0]?.ready == true }
        status.connected.store(connected, ordering: .releasing)
    }

    static func socketAddress(_ node: RedisAddress) throws(IOError) -> SocketAddress {
        if let first = try SocketAddress.resolve(host: node.host, port: node.port).first { return first }
        return try SocketAddress(ipAddress: node.host, port: node.port)
    }

    private static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}

/// The broker's connections to one master: the subscriber (opened at once) and a publisher (opened for the first
/// `publish`). Loop-confined.
final class RedisClusterNodeLink {
    let address: RedisAddress
    private let context: LoopContext
    private let password: String?
    private(set) var subscriber: RedisConnection?
    private var publisher: RedisConnection?
    /// Whether the subscriber answered its first PING.
    private(set) var ready = false
    private var lost: ((RedisError?) -> Void)?

    init(address: RedisAddress, context: LoopContext, password: String?) {
        self.address = address
        self.context = context
        self.password = password
    }

    /// Opens the subscriber; `ready` once it answers, `lost` once if it fails or closes.
    func open(
        ready: @escaping () -> Void,
        lost: @escaping (RedisError?) -> Void,
        message: @escaping (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Void,
        dropped: @escaping (UnsafeRawBufferPointer) -> Void
    ) {
        self.lost = lost
        let connection: RedisConnection
        do {
            connection = try RedisConnection(address: try RedisClusterBrokerSession.socketAddress(address), on: context)
        } catch {
            let reason = RedisError.connect("\(address): \(error)")
            context.enqueue { [weak self] in self?.fail(reason) }
            return
        }
        subscriber = connection
        connection.onClose = { [weak self] error in self?.fail(error ?? .closed) }
        connection.onMessage = { channel, payload in message(channel, payload) }
        connection.onShardChannelDropped = dropped
        if let password { connection.send(["AUTH", password]) { [weak self] in if case .failure(let error) = $0 { self?.fail(error) } } }
        connection.send(["PING"]) { [weak self] result in
            guard let self else { return }
            switch result {
            case .success:
                self.ready = true
                ready()
            case .failure(let error):
                self.fail(error)
            }
        }
    }

    /// The publisher connection, opened when first needed (nil when it cannot be).
    func publisherConnection() -> RedisConnection? {
        if let publisher, !publisher.isClosed { return publisher }
        guard let connection = try? RedisConnection(address: try RedisClusterBrokerSession.socketAddress(address), on: context) else {
            return nil
        }
        if let password { connection.send(["AUTH", password]) }
        publisher = connection
        return connection
    }

    func close() {
        lost = nil
        ready = false
        subscriber?.close()
        publisher?.close()
        subscriber = nil
        publisher = nil
    }

    private func fail(_ error: RedisError) {
        guard let lost else { return }
        self.lost = nil
        ready = false
        lost(error)
    }
}

@available(*, unavailable)
extension RedisClusterNodeLink: Sendable {}
