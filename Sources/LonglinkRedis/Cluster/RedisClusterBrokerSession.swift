import LonglinkCore
import LonglinkLoop
import Synchronization

/// The cluster broker's state on its loop: the slot map, one `RedisClusterNodeLink` per master, the routes this
/// node holds (reference counted), their shard channels with where each is subscribed, and the callbacks waiting
/// for confirmations. Loop-confined.
///
/// A channel is in one of three states: not subscribed anywhere (waiting for its master to be known or to
/// answer), sent (an `SSUBSCRIBE` in flight to `node`), or active on `node`. It leaves `active` when `node`'s
/// connection drops or `node` pushes `sunsubscribe` (the slot moved); it is then marked `missed`, and once it is
/// active again on the slot's current master the delivery hears `brokerMayHaveMissed` for its routes.
final class RedisClusterBrokerSession {
    struct Channel {
        var routes: [Route] = []
        /// Subscriptions of plain channels (`subscribeChannels`) to it.
        var plain = 0
        var slot: Int
        /// The master the current `SSUBSCRIBE` went to.
        var node: RedisAddress?
        var sent = false
        var active = false
        /// A subscription was lost: the delivery must hear of it once subscribed again.
        var missed = false
    }

    let configuration: RedisClusterBroker.Configuration
    let status: RedisClusterBrokerStatus
    let handler: any BrokerDelivery
    let context: LoopContext
    var map = RedisClusterSlotMap()
    var links: [RedisAddress: RedisClusterNodeLink] = [:]
    var routes: [Route: Int] = [:]
    var channels: [String: Channel] = [:]
    /// The line-wide routes among `routes` (`order://taxi/*`), each on its line's channel `PREFIX:l:{LINE}`.
    private var lineRoutes: [Route] = []
    /// Each held route's channel name (built once, at subscribe).
    private var routeChannels: [Route: String] = [:]
    /// `PREFIX:l:`: a message on a channel starting with it is a line channel's copy of a record.
    private let lineChannelPrefix: [UInt8]
    /// The line channel (name and slot) of each kind and line records were published for.
    private var lineChannelCache: [LineKey: (name: [UInt8], slot: Int)] = [:]

    private var lineCopiesLost = 0
    private var lineLossLogged: ContinuousClock.Instant?

    private struct LineKey: Hashable {
        var kind: RouteKind
        var line: BusinessLine
    }
    private var waiters: [(channels: Set<String>, body: @Sendable () -> Void)] = []
    var backoff: Duration
    var refreshing = false
    var refreshScheduled = false
    var closed = false
    /// What happened this loop iteration, in order, handed over before the loop sleeps: batches of records
    /// received, and routes whose lost subscription is back. The order matters: a record received on a route's new
    /// subscription must reach the gateway after the news that the route may have missed records, or a
    /// subscriber would take it and skip the gap instead of resuming from before it.
    private var events: [Event] = []
    /// The records received since the last event, with their routes (the next `.records` event).
    private var received: [OrderChangeRecord] = []
    private var receivedRoutes: [Route] = []

    private enum Event {
        case records([OrderChangeRecord], [Route])
        case missed([Route])
    }
    var logger: Logger { configuration.logger }

    init(
        configuration: RedisClusterBroker.Configuration,
        status: RedisClusterBrokerStatus,
        handler: any BrokerDelivery,
        context: LoopContext
    ) {
        self.configuration = configuration
        self.status = status
        self.handler = handler
        self.context = context
        backoff = configuration.initialBackoff
        lineChannelPrefix = Array("\(configuration.prefix):l:".utf8)
    }

    func start() {
        context.addBeforeSleep { [weak self] in self?.handOver() }
        _ = context.schedule(every: configuration.refreshInterval) { [weak self] in self?.refreshMap() }
        refreshMap()
    }

    func close() {
        closed = true
        status.connected.store(false, ordering: .releasing)
        for link in links.values { link.close() }
        links.removeAll()
        for waiter in waiters { waiter.body() }
        waiters.removeAll()
    }

    // MARK: Subscriptions

    /// The shard channel of a route: the order's (`PREFIX:r:{LINE/ID}`), or the line's (`PREFIX:l:{LINE}`) for a
    /// line-wide route.
    func channelName(for route: Route) -> String {
        route.isLineWide
            ? RedisKeys.lineChannel(for: route, prefix: configuration.prefix)
            : RedisKeys.clusterChannel(for: route, prefix: configuration.prefix)
    }

    func subscribe(_ newRoutes: [Route]) {
        for route in newRoutes {
            routes[route, default: 0] += 1
            guard routes[route] == 1 else { continue }
            let name = channelName(for: route)
            routeChannels[route] = name
            if route.isLineWide { lineRoutes.append(route) }
            if channels[name] == nil { channels[name] = Channel(slot: RedisClusterSlot.of(name)) }
            channels[name]!.routes.append(route)
            if channels[name]!.routes.count == 1 { place(name) }
        }
    }

    func unsubscribe(_ oldRoutes: [Route]) {
        for route in oldRoutes {
            guard let count = routes[route] else { continue }
            guard count == 1 else {
                routes[route] = count - 1
                continue
            }
            routes[route] = nil
            routeChannels[route] = nil
            if route.isLineWide { lineRoutes.removeAll { $0 == route } }
            let name = channelName(for: route)
            guard var channel = channels[name] else { continue }
            channel.routes.removeAll { $0 == route }
            channels[name] = channel
            release(name)
        }
    }

    /// Plain shard channels (no routes: presence events), reference counted; their messages go to the
    /// configuration's `plainMessages`.
    func subscribeChannels(_ names: [String]) {
        for name in names {
            if channels[name] == nil { channels[name] = Channel(slot: RedisClusterSlot.of(name)) }
            channels[name]!.plain += 1
            if channels[name]!.plain == 1 && channels[name]!.routes.isEmpty { place(name) }
        }
    }

    func unsubscribeChannels(_ names: [String]) {
        for name in names {
            guard var channel = channels[name], channel.plain > 0 else { continue }
            channel.plain -= 1
            channels[name] = channel
            release(name)
        }
    }

    /// Unsubscribes a channel nothing wants any more.
    private func release(_ name: String) {
        guard let channel = channels[name], channel.routes.isEmpty, channel.plain == 0 else { return }
        channels[name] = nil
        if channel.active { status.activeChannels.subtract(1, ordering: .relaxed) }
        if (channel.active || channel.sent), let node = channel.node, let link = links[node], link.ready {
            link.subscriber?.shardUnsubscribe([name])
        }
    }

    func whenSubscribed(_ routes: [Route], _ body: @escaping @Sendable () -> Void) {
        let names = Set(routes.map(channelName(for:)))
        let pending = names.filter { channels[$0].map { !$0.active } ?? false }
        if pending.isEmpty { return body() }
        waiters.append((pending, body))
    }

    /// Sends the channel's `SSUBSCRIBE` to its slot's master, when that master is known and its link is up (a link
    /// coming up places every channel waiting for it).
    func place(_ name: String) {
        guard !closed, var channel = channels[name], !channel.active, !channel.sent else { return }
        guard let master = map.master(forSlot: channel.slot) else {
            scheduleRefresh()
            return
        }
        channel.node = master
        let link = ensureLink(master)
        guard link.ready, let subscriber = link.subscriber else {
            channels[name] = channel
            return
        }
        channel.sent = true
        channels[name] = channel
        logger.debug("Redis Cluster broker: SSUBSCRIBE \(name) on \(master)")
        subscriber.shardSubscribe([name]) { [weak self] result in self?.subscribeAnswered(name, on: master, result) }
    }

    /// Places every channel that is neither active nor in flight.
    func placeWaiting() {
        for (name, channel) in channels where !channel.active && !channel.sent { place(name) }
    }

    private func subscribeAnswered(_ name: String, on node: RedisAddress, _ result: Result<RedisReply, RedisError>) {
        guard !closed, var channel = channels[name], channel.sent, channel.node == node else { return }
        channel.sent = false
        switch result {
        case .success:
            logger.debug("Redis Cluster broker: \(name) active on \(node)\(channel.missed ? " (missed)" : "")")
            channel.active = true
            status.activeChannels.add(1, ordering: .relaxed)
            if channel.missed {
                channel.missed = false
                closeRecordBatch()
                if case .missed(let routes)? = events.last {
                    events[events.count - 1] = .missed(routes + channel.routes)
                } else {
                    events.append(.missed(channel.routes))
                }
                status.resubscribes.add(1, ordering: .relaxed)
            }
            channels[name] = channel
            confirmed()
        case .failure(.server(let message)):
            channels[name] = channel
            switch RedisClusterRedirection(error: message, from: node) {
            case .moved(let slot, let master)?:
                map.assign(slot, to: master)
                scheduleRefresh()
                place(name)
            case .ask?, .tryAgain?, .clusterDown?:
                scheduleRefresh()
                context.schedule(after: .milliseconds(100)) { [weak self] in self?.place(name) }
            case nil:
                logger.warning("Redis Cluster broker: SSUBSCRIBE \(name) on \(node) failed: \(message); retrying")
                context.schedule(after: backoff) { [weak self] in self?.place(name) }
            }
        case .failure:
            // The link is closing: `linkLost` places the channel again.
            channels[name] = channel
        }
    }

    /// `node` pushed `sunsubscribe` for a channel: its slot moved away (or the node stopped serving it).
    func dropped(_ name: String, by node: RedisAddress) {
        guard var channel = channels[name], channel.node == node, channel.active || channel.sent else { return }
        if channel.active {
            channel.active = false
            channel.missed = true
            status.activeChannels.subtract(1, ordering: .relaxed)
        }
        channel.sent = false
        channels[name] = channel
        logger.notice("Redis Cluster broker: \(node) dropped \(name) (slot \(channel.slot) moved); subscribing on its new owner")
        // Subscribe again where the map says, unless it still names `node`: a node that became a replica would
        // accept the SSUBSCRIBE for its master's slot, so read the map first then.
        if map.master(forSlot: channel.slot) != node { place(name) }
        scheduleRefresh()
    }

    /// After a new slot map: a channel active on a node that is not its slot's master (it was subscribed on a
    /// stale map, e.g. on a restarted master that had been failed over) moves to the master, `missed`.
    func moveMisplacedChannels() {
        for (name, channel) in channels where channel.active {
            guard let node = channel.node, let master = map.master(forSlot: channel.slot), master != node else { continue }
            var moved = channel
            moved.active = false
            moved.missed = true
            moved.node = nil
            channels[name] = moved
            status.activeChannels.subtract(1, ordering: .relaxed)
            if let link = links[node], link.ready { link.subscriber?.shardUnsubscribe([name]) }
            logger.notice("Redis Cluster broker: \(name) was subscribed on \(node), but \(master) serves slot \(channel.slot); moving it")
            place(name)
        }
    }

    /// Redis confirmed subscriptions: run the waiters whose channels are all active (or no longer wanted).
    private func confirmed() {
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

    func receive(_ channel: UnsafeRawBufferPointer, _ payload: UnsafeRawBufferPointer) {
        if let plain = configuration.plainMessages {
            return plain(String(decoding: channel, as: UTF8.self), Array(payload))
        }
        guard let record = RedisRecordCodec.record(message: payload) else {
            logger.warning("Redis Cluster broker: an undecodable message of \(payload.count) bytes was dropped")
            return
        }
        let route = record.route
        if channel.starts(with: lineChannelPrefix) {
            // A line channel's copy. When the order's own channel is active here too, that copy reaches the
            // line-wide subscribers as well (the hub gives a record to both kinds): this one would be a duplicate.
            guard lineRoutes.contains(where: { $0.lineCovers(route) }) else { return }
            if let name = routeChannels[route], channels[name]?.active == true { return }
        } else {
            guard routes[route] != nil else { return }
        }
        received.append(record)
        receivedRoutes.append(route)
    }

    /// Ends the current batch of records: it becomes an event, before whatever happens next.
    private func closeRecordBatch() {
        guard !received.isEmpty else { return }
        events.append(.records(received, receivedRoutes))
        received.removeAll(keepingCapacity: true)
        receivedRoutes.removeAll(keepingCapacity: true)
    }

    /// Before the loop sleeps: what happened, in order (see `events`).
    private func handOver() {
        closeRecordBatch()
        guard !events.isEmpty else { return }
        let happened = events
        events.removeAll(keepingCapacity: true)
        for event in happened {
            switch event {
            case .records(let records, let recordRoutes): handler.brokerDidDeliver(contentsOf: records, routes: recordRoutes)
            case .missed(let routes): handler.brokerMayHaveMissed(routes)
            }
        }
    }

    /// Publishes records on their routes' channels and their lines' channels (for stores that do not publish).
    func publish(_ records: [OrderChangeRecord]) {
        for record in records {
            let name = RedisKeys.clusterChannel(for: record.route, prefix: configuration.prefix)
            let message = RedisRecordCodec.message(record)
            publish(Array(name.utf8), message, slot: RedisClusterSlot.of(name), record: record, redirects: 0)
            publishToLine(record, message)
        }
    }

    /// Publishes committed records on their lines' channels only (the store `SPUBLISH`ed them on their routes').
    func publishToLines(_ records: [OrderChangeRecord]) {
        for record in records { publishToLine(record, RedisRecordCodec.message(record)) }
    }

    /// `SPUBLISH PREFIX:l:{LINE} record` on the line's master: one command, pipelined with the others of this loop
    /// iteration on that master's publisher connection.
    private func publishToLine(_ record: OrderChangeRecord, _ message: [UInt8]) {
        let key = LineKey(kind: record.kind, line: record.line)
        let channel: (name: [UInt8], slot: Int)
        if let known = lineChannelCache[key] {
            channel = known
        } else {
            let name = RedisKeys.lineChannel(for: .lineWide(record.kind, record.line.name), prefix: configuration.prefix)
            channel = (Array(name.utf8), RedisClusterSlot.of(name))
            lineChannelCache[key] = channel
        }
        publish(channel.name, message, slot: channel.slot, record: record, redirects: 0, toLine: true)
    }

    /// A line channel's copy was lost (its shard is failing over): live-only consoles miss it, and are disconnected
    /// to resubscribe once their node's subscription of the line is lost too. Logged at most once a second.
    private func lineCopyFailed(_ record: OrderChangeRecord, _ why: String) {
        lineCopiesLost += 1
        let now = ContinuousClock.now
        if let last = lineLossLogged, now - last < .seconds(1) { return }
        lineLossLogged = now
        logger.warning("Redis Cluster broker: \(lineCopiesLost) line channel copies not published (last: \(record.route) at \(record.position): \(why))")
        lineCopiesLost = 0
    }

    private func publish(_ channel: [UInt8], _ message: [UInt8], slot: Int, record: OrderChangeRecord, redirects: Int, toLine: Bool = false) {
        guard let master = map.master(forSlot: slot), let publisher = ensureLink(master).publisherConnection() else {
            if toLine { return lineCopyFailed(record, "no master serves slot \(slot)") }
            logger.error("Redis Cluster broker: no master serves slot \(slot); \(record.route) at \(record.position) was not published")
            return
        }
        publisher.shardPublish(channel: channel, message: message) { [weak self] result in
            guard let self, case .failure(let error) = result else { return }
            if case .server(let text) = error, case .moved(let moved, let owner)? = RedisClusterRedirection(error: text, from: master),
                redirects < 3
            {
                self.map.assign(moved, to: owner)
                self.publish(channel, message, slot: slot, record: record, redirects: redirects + 1, toLine: toLine)
                return
            }
            if toLine { return self.lineCopyFailed(record, "\(error)") }
            self.logger.error("Redis Cluster broker: publishing \(record.route) at \(record.position) failed: \(error)")
        }
    }
}

@available(*, unavailable)
extension RedisClusterBrokerSession: Sendable {}
