public import LonglinkCore
import Glibc
import LonglinkLoop
import Synchronization

/// Presence shared by every node through a Redis Cluster, each script touching one slot.
///
/// Layout (`RedisKeys`): a route with members has a hash `PREFIX:p:{LINE/ID}` in the route's slot, with one field
/// per node (its node id) holding that node's liveness deadline and members, `DEADLINE\nMEMBERS`. The deadline is
/// the Redis server's clock plus `ttl` when the field was written (the write script reads `TIME`, so the nodes'
/// clocks do not matter), and every node rewrites its fields every `ttl / 3`. A read (one script on the route's
/// master) keeps the fields whose deadline has not passed and deletes the others. So there is no global per-node
/// live key: a node killed with `kill -9` drops out of every presence answer at most `ttl` after its last refresh;
/// a clean shutdown deletes its fields at once; the hash itself expires `ttl` after the last refresh of any node.
///
/// Join/leave events: `PREFIX:pw:{LINE/ID}` exists while some node watches the route's events, and the publish
/// script `SPUBLISH`es on `PREFIX:pe:{LINE/ID}` only then (the three keys share the route's slot). A node
/// watching a route `SSUBSCRIBE`s its event channel through a `RedisClusterBroker` of plain channels, which
/// follows failovers and slot moves like the record channels.
///
/// Threading: its own one-loop `EventLoopGroup` with a blocking `RedisClusterClient` (commands pipelined per
/// master); `joined`/`left` update a `LocalPresence` of this node and mark the route dirty, written every
/// `flushInterval`. While a route's master is unreachable, its reads fail with `.unavailable`.
public final class RedisClusterPresence: PresenceStore {
    /// Where the cluster is and how entries expire.
    public typealias Configuration = RedisPresenceConfiguration<RedisClusterAddress>

    /// The configuration.
    public let configuration: Configuration
    public var countsOnlyAbove: Int { configuration.countsOnlyAbove }
    let local: LocalPresence
    let dirty = DirtyRoutes()
    /// Where other nodes' join/leave events go.
    private let remote = RemoteEventHandler()
    private let group: EventLoopGroup
    /// The session on the presence loop: made and bound by the loop's first job (posted by `init`), so every later
    /// job finds it (until `shutdown` lets go of it, or the loop finished).
    private let session: LoopBound<RedisClusterPresenceSession>
    /// Subscribes the event channels of watched routes on their shards.
    private let events: RedisClusterBroker
    private let stopped = Atomic<Bool>(false)

    /// Starts the loop and the event subscriber (connecting in the background).
    public init(configuration: Configuration) throws(PresenceError) {
        self.configuration = configuration
        local = LocalPresence(countsOnlyAbove: configuration.countsOnlyAbove)
        let remote = self.remote
        let eventPrefix = "\(configuration.prefix):pe:{"
        let nodeID = configuration.nodeID
        var eventConfiguration = RedisClusterBroker.Configuration(
            address: configuration.address, password: configuration.password, prefix: configuration.prefix,
            logger: configuration.logger
        )
        eventConfiguration.plainMessages = { channel, payload in
            guard let event = Self.event(channel: channel, payload: payload, eventPrefix: eventPrefix), event.member.nodeID != nodeID else {
                return
            }
            remote.handler.withLock { $0 }?(event)
        }
        do {
            group = try EventLoopGroup(numberOfThreads: 1)
            events = try RedisClusterBroker(configuration: eventConfiguration)
            try events.start(delivering: NoRecords())
        } catch {
            throw .unavailable("cannot start the Redis Cluster presence: \(error)")
        }
        session = LoopBound(loop: group.loops[0])
        let configuration = self.configuration
        session.loop.execute { [local, dirty, session] context in
            let made = RedisClusterPresenceSession(configuration: configuration, local: local, dirty: dirty, context: context)
            session.bind(made, on: context)
            made.start()
        }
    }

    public func joined(_ route: Route, _ member: PresenceMember) {
        local.joined(route, member)
        markDirty(route)
        announce(route, joined: true, member)
    }

    public func left(_ route: Route, connectionID: String) {
        let member = local.members(of: route).first { $0.connectionID == connectionID }
        local.left(route, connectionID: connectionID)
        markDirty(route)
        if let member { announce(route, joined: false, member) }
    }

    /// Publishes a join/leave for the other nodes' subscribers that asked for events (none over the counts-only
    /// threshold).
    private func announce(_ route: Route, joined: Bool, _ member: PresenceMember) {
        guard local.localCount(of: route) <= configuration.countsOnlyAbove else { return }
        session.execute { $0.publish(route, joined: joined, member) }
    }

    public func deliverRemoteEvents(to handler: @escaping @Sendable (PresenceEvent) -> Void) {
        remote.handler.withLock { $0 = handler }
    }

    public func watchEvents(_ route: Route) {
        session.execute { [events] session in
            guard session.watch(route) else { return }
            events.subscribeChannels([session.eventChannel(route)])
        }
    }

    public func unwatchEvents(_ route: Route) {
        session.execute { [events] session in
            guard session.unwatch(route) else { return }
            events.unsubscribeChannels([session.eventChannel(route)])
        }
    }

    public func localCount(of route: Route) -> Int { local.localCount(of: route) }

    public func presence(of route: Route, completion: @escaping @Sendable (Result<[PresenceMember], PresenceError>) -> Void) {
        let posted = session.loop.execute { [session] _ in
            guard let session = session.object else { return completion(.failure(.unavailable("presence is shut down"))) }
            completion(session.read(route))
        }
        if !posted { completion(.failure(.unavailable("presence is shut down"))) }
    }

    /// Deletes this node's entries (waiting up to a second for the cluster), then stops.
    public func shutdown() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let done = Atomic<Bool>(false)
        let posted = session.loop.execute { [session] _ in
            session.object?.removeAll()
            session.object?.close()
            session.unbind()
            done.store(true, ordering: .releasing)
        }
        let deadline = ContinuousClock.now + .seconds(1)
        while posted && !done.load(ordering: .acquiring) && ContinuousClock.now < deadline {
            usleep(1_000)
        }
        events.shutdown()
        group.shutdownGracefully()
    }

    private func markDirty(_ route: Route) {
        let schedule = dirty.state.withLock { state -> Bool in
            state.routes.insert(route)
            guard !state.scheduled else { return false }
            state.scheduled = true
            return true
        }
        guard schedule else { return }
        let interval = configuration.flushInterval
        session.loop.execute { [session] context in
            context.schedule(after: interval) { session.object?.flush() }
        }
    }

    /// The event a message on `PREFIX:pe:{TAG}` carries (`J` or `L`, a newline, the member), nil when it is none.
    static func event(channel: String, payload: [UInt8], eventPrefix: String) -> PresenceEvent? {
        guard channel.hasPrefix(eventPrefix), channel.hasSuffix("}") else { return nil }
        let tag = String(channel.dropFirst(eventPrefix.count).dropLast())
        guard let route = try? Route(parsingSubscription: tag.contains("://") ? tag : "order://" + tag) else { return nil }
        let text = String(decoding: payload, as: UTF8.self)
        guard text.count > 2, let member = RedisPresenceSession.decode(String(text.dropFirst(2))).first else { return nil }
        return PresenceEvent(route: route, joined: text.hasPrefix("J"), member: member)
    }
}

/// Where other nodes' join/leave events go (set after the event broker started).
private final class RemoteEventHandler: Sendable {
    let handler = Mutex<(@Sendable (PresenceEvent) -> Void)?>(nil)
}

/// The event broker carries no records.
private final class NoRecords: BrokerDelivery {
    func brokerDidDeliver(_ record: OrderChangeRecord) {}
}
