import LonglinkCore
import LonglinkLoop
import Synchronization

/// The Redis broker's state on its loop: the two connections, the routes this node holds (reference counted),
/// the channels they map to and whether Redis confirmed each, and the callbacks waiting for confirmations.
/// Loop-confined.
final class RedisBrokerSession {
    private struct Channel {
        /// Routes of this node mapped to the channel.
        var routes = 0
        /// Whether Redis confirmed the current SUBSCRIBE.
        var active = false
    }

    private let configuration: RedisBroker.Configuration
    private let status: RedisBrokerStatus
    private let handler: any BrokerDelivery
    private let context: LoopContext
    private var subscriber: RedisConnection?
    private var publisher: RedisConnection?
    /// Bumped per connection attempt, so callbacks of an old attempt are ignored.
    private var generation = 0
    private var ready = 0
    private var routes: [Route: Int] = [:]
    /// The line-wide routes among `routes` (`order://taxi/*`).
    private var lineRoutes: [Route] = []
    /// The last record handed on while line-wide routes are held (to drop the pattern's copy of it).
    private var lastDelivered: (route: Route, position: StreamPosition)?
    private var channels: [String: Channel] = [:]
    private var waiters: [(channels: Set<String>, body: @Sendable () -> Void)] = []
    private var backoff: Duration
    private var lostSubscriptions = false
    private var closed = false
    private var logger: Logger { configuration.logger }

    init(configuration: RedisBroker.Configuration, status: RedisBrokerStatus, handler: any BrokerDelivery, context: LoopContext) {
        self.configuration = configuration
        self.status = status
        self.handler = handler
        self.context = context
        backoff = configuration.initialBackoff
    }

    // MARK: Connecting

    func connect() {
        guard !closed else { return }
        generation += 1
        ready = 0
        let attempt = generation
        let address = configuration.address
        do {
            let socketAddress = try SocketAddress.resolve(host: address.host, port: address.port).first
                ?? SocketAddress(ipAddress: address.host, port: address.port)
            let subscriber = try RedisConnection(address: socketAddress, on: context)
            let publisher = try RedisConnection(address: socketAddress, on: context)
            self.subscriber = subscriber
            self.publisher = publisher
            for connection in [subscriber, publisher] {
                connection.onClose = { [weak self] error in self?.lost(attempt, error) }
                if let password = configuration.password {
                    connection.send(["AUTH", password]) { [weak self] result in
                        if case .failure(let error) = result { self?.lost(attempt, error) }
                    }
                }
                connection.send(["PING"]) { [weak self] result in
                    switch result {
                    case .success: self?.connectionReady(attempt)
                    case .failure(let error): self?.lost(attempt, error)
                    }
                }
            }
            subscriber.onMessage = { [weak self] _, payload in self?.received(payload) }
        } catch {
            lost(attempt, .connect("\(address): \(error)"))
        }
    }

    private func connectionReady(_ attempt: Int) {
        guard attempt == generation, !closed else { return }
        ready += 1
        guard ready == 2, let subscriber else { return }
        if status.reconnects.load(ordering: .relaxed) > 0 || lostSubscriptions {
            logger.notice("Redis broker reconnected to \(configuration.address)")
        }
        backoff = configuration.initialBackoff
        status.connected.store(true, ordering: .releasing)
        // Subscribe every channel again, pipelined: all SUBSCRIBE commands leave in one write this iteration.
        let names = channels.keys.sorted()
        let resubscribed = Array(routes.keys)
        let missed = lostSubscriptions
        lostSubscriptions = false
        var remaining = (names.count + 999) / 1_000
        for start in stride(from: 0, to: names.count, by: 1_000) {
            let chunk = Array(names[start..<min(start + 1_000, names.count)])
            Self.subscribe(chunk, on: subscriber) { [weak self] result in
                guard let self, case .success = result else { return }
                self.confirmed(chunk)
                remaining -= 1
                if remaining == 0 && missed { self.handler.brokerMayHaveMissed(resubscribed) }
            }
        }
    }

    private func lost(_ attempt: Int, _ error: RedisError?) {
        guard attempt == generation, !closed else { return }
        generation += 1  // ignore the other connection's close
        let wasConnected = status.connected.exchange(false, ordering: .acquiringAndReleasing)
        subscriber?.close()
        publisher?.close()
        subscriber = nil
        publisher = nil
        for name in Array(channels.keys) where channels[name]!.active {
            channels[name]!.active = false
            status.activeChannels.subtract(1, ordering: .relaxed)
        }
        if wasConnected {
            if !routes.isEmpty { lostSubscriptions = true }
            status.reconnects.add(1, ordering: .relaxed)
        }
        let delay = backoff
        let jittered = Duration.milliseconds(Int64.random(in: 0...max(1, milliseconds(delay))) / 2 + milliseconds(delay) / 2)
        logger.warning(
            "Redis broker: \(configuration.address) \(wasConnected ? "connection lost" : "unreachable"): "
                + "\(error.map { "\($0)" } ?? "closed"); retrying in \(milliseconds(jittered)) ms"
        )
        backoff = min(backoff * 2, configuration.maxBackoff)
        context.schedule(after: jittered) { [weak self] in self?.connect() }
    }

    func close() {
        closed = true
        generation += 1
        status.connected.store(false, ordering: .releasing)
        subscriber?.close()
        publisher?.close()
        subscriber = nil
        publisher = nil
        for waiter in waiters { waiter.body() }
        waiters.removeAll()
    }

    // MARK: Subscriptions

    func subscribe(_ newRoutes: [Route]) {
        var added: [String] = []
        for route in newRoutes {
            routes[route, default: 0] += 1
            guard routes[route] == 1 else { continue }
            if route.isLineWide { lineRoutes.append(route) }
            for name in channelNames(for: route) {
                channels[name, default: Channel()].routes += 1
                if channels[name]!.routes == 1 { added.append(name) }
            }
        }
        guard !added.isEmpty, status.connected.load(ordering: .relaxed), let subscriber else { return }
        Self.subscribe(added, on: subscriber) { [weak self] result in
            if case .success = result { self?.confirmed(added) }
        }
    }

    func unsubscribe(_ oldRoutes: [Route]) {
        var removed: [String] = []
        for route in oldRoutes {
            guard let count = routes[route] else { continue }
            guard count == 1 else {
                routes[route] = count - 1
                continue
            }
            routes[route] = nil
            if route.isLineWide { lineRoutes.removeAll { $0 == route } }
            for name in channelNames(for: route) {
                guard var channel = channels[name] else { continue }
                channel.routes -= 1
                if channel.routes == 0 {
                    if channel.active { status.activeChannels.subtract(1, ordering: .relaxed) }
                    channels[name] = nil
                    removed.append(name)
                } else {
                    channels[name] = channel
                }
            }
        }
        guard !removed.isEmpty, status.connected.load(ordering: .relaxed), let subscriber else { return }
        let patterns = removed.filter { $0.hasSuffix("*") }
        let plain = removed.filter { !$0.hasSuffix("*") }
        if !patterns.isEmpty { subscriber.punsubscribe(patterns) }
        if !plain.isEmpty { subscriber.unsubscribe(plain) }
    }

    /// The channels (or, for a line-wide route with per-route channels, the pattern) carrying `route`'s records:
    /// one per order route; for `order://taxi/*` the pattern `PREFIX:r:order://taxi/*` (one subscription per line
    /// per node) or, with sharded channels, every shard (a line's orders hash to all of them).
    private func channelNames(for route: Route) -> [String] {
        guard route.isLineWide, case .sharded(let count) = configuration.channels else {
            return [configuration.channels.channel(for: route, prefix: configuration.prefix)]
        }
        return (0..<max(1, count)).map { "\(configuration.prefix):s:\($0)" }
    }

    /// SUBSCRIBE the channels and PSUBSCRIBE the patterns (names ending in `*`: no route or shard channel does)
    /// among `names`; `completion` runs once, after every confirmation (or the first failure).
    private static func subscribe(_ names: [String], on connection: RedisConnection, completion: @escaping (Result<RedisReply, RedisError>) -> Void) {
        let patterns = names.filter { $0.hasSuffix("*") }
        let plain = names.filter { !$0.hasSuffix("*") }
        var remaining = (patterns.isEmpty ? 0 : 1) + (plain.isEmpty ? 0 : 1)
        var failed = false
        let done: (Result<RedisReply, RedisError>) -> Void = { result in
            guard !failed else { return }
            if case .failure = result {
                failed = true
                return completion(result)
            }
            remaining -= 1
            if remaining == 0 { completion(result) }
        }
        if !patterns.isEmpty { connection.psubscribe(patterns, completion: done) }
        if !plain.isEmpty { connection.subscribe(plain, completion: done) }
    }

    func whenSubscribed(_ routes: [Route], _ body: @escaping @Sendable () -> Void) {
        let names = Set(routes.flatMap { channelNames(for: $0) })
        let pending = names.filter { channels[$0].map { !$0.active } ?? false }
        if pending.isEmpty { return body() }
        waiters.append((pending, body))
    }

    /// Redis confirmed SUBSCRIBE for `names`: mark them active (if still wanted) and run satisfied waiters.
    private func confirmed(_ names: [String]) {
        for name in names {
            guard var channel = channels[name], !channel.active else { continue }
            channel.active = true
            channels[name] = channel
            status.activeChannels.add(1, ordering: .relaxed)
        }
        guard !waiters.isEmpty else { return }
        var still: [(channels: Set<String>, body: @Sendable () -> Void)] = []
        var run: [@Sendable () -> Void] = []
        for waiter in waiters {
            if waiter.channels.allSatisfy({ channels[$0].map(\.active) ?? true }) { run.append(waiter.body) } else { still.append(waiter) }
        }
        waiters = still
        for body in run { body() }
    }

    // MARK: Records

    private func received(_ payload: UnsafeRawBufferPointer) {
        guard let record = RedisRecordCodec.record(message: payload) else {
            logger.warning("Redis broker: an undecodable message of \(payload.count) bytes was dropped")
            return
        }
        let route = record.route
        // Sharded channels carry other nodes' routes too; a line-wide route wants every route of its line.
        guard routes[route] != nil || lineRoutes.contains(where: { $0.lineCovers(route) }) else { return }
        // A node subscribed to an order's channel and to its line's pattern gets each record twice, back to
        // back (`message`, then `pmessage`): the gateway delivers one record to both kinds of subscribers, once.
        if !lineRoutes.isEmpty {
            if let last = lastDelivered, last.position == record.position, last.route == route { return }
            lastDelivered = (route, record.position)
        }
        handler.brokerDidDeliver(record)
    }

    func publish(_ record: OrderChangeRecord) {
        let channel = Array(configuration.channels.channel(for: record.route, prefix: configuration.prefix).utf8)
        guard let publisher else {
            logger.error("Redis broker: lost the connection before publishing \(record.route) at \(record.position)")
            return
        }
        publisher.publish(channel: channel, message: RedisRecordCodec.message(record)) { [logger] result in
            if case .failure(let error) = result {
                logger.error("Redis broker: publishing \(record.route) at \(record.position) failed: \(error)")
            }
        }
    }
}

@available(*, unavailable)
extension RedisBrokerSession: Sendable {}

/// Whole milliseconds of a duration.
private func milliseconds(_ duration: Duration) -> Int64 {
    let (seconds, attoseconds) = duration.components
    return seconds * 1000 + attoseconds / 1_000_000_000_000_000
}
