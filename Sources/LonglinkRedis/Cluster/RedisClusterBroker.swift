public import LonglinkCore
import LonglinkLoop
import Synchronization

/// The `Broker` for gateway nodes on a Redis Cluster: sharded pub/sub. Each route has one shard channel,
/// `PREFIX:r:{LINE/ID}`, in the order's hash slot (`RedisKeys`); the store's apply script `SPUBLISH`es each record
/// there, on the master owning the slot, and Redis delivers it only to subscribers on that shard. Each node
/// `SSUBSCRIBE`s a route's channel on the master owning its slot, so no message is copied to every node of the
/// cluster (classic `PUBLISH` on a cluster is broadcast to all nodes over the cluster bus).
///
/// Threading is `RedisBroker`'s: one loop thread of its own, with one subscriber connection per master (and a
/// publisher connection per master for `publish`, opened when first needed), fed through its inbox. Records
/// received during one loop iteration are handed to the delivery as one batch.
///
/// Topology and failures (see `RedisClusterBrokerSession`):
/// - The slot map comes from `CLUSTER SLOTS` (seeds, then known nodes), at start, every 10 s, and whenever a
///   master's connection drops; a channel refused with `-MOVED` follows the redirection at once.
/// - A master lost (killed, or failed over): its channels are subscribed again on the master the map names once
///   it answers (back-off 100 ms doubling to `maxBackoff`), and the delivery is told (`brokerMayHaveMissed`), so
///   their subscribers resume from the store.
/// - A slot moved (`redis-cli --cluster reshard`): the old owner pushes `sunsubscribe` for its channels; they
///   are subscribed again on the new owner, with the same `brokerMayHaveMissed`.
/// - While one shard is down, the routes of the other shards keep flowing; `subscribe` only throws
///   `.unavailable` while no slot map is known at all, and `whenSubscribed` waits for the shard to answer.
///
/// Line-wide routes (`order://taxi/*`): sharded pub/sub has no patterns, so each line has one shard channel,
/// `PREFIX:l:{LINE}`, in one slot. A node with line-wide subscribers `SSUBSCRIBE`s it (once per line per node,
/// resubscribed like a route's channel); the committing node `SPUBLISH`es every record there too
/// (`publishToLines`, after the commit, from this loop), so a line's whole traffic goes through its slot's shard.
public final class RedisClusterBroker: Broker {
    /// How to reach the cluster and name channels.
    public struct Configuration: Sendable {
        /// Seed nodes.
        public var address: RedisClusterAddress
        /// Sent with `AUTH` when set.
        public var password: String?
        /// The key and channel prefix (the same as the store's).
        public var prefix: String
        /// The first reconnect delay; doubles per failed attempt.
        public var initialBackoff: Duration
        /// The longest reconnect delay.
        public var maxBackoff: Duration
        /// How often the slot map is read even when nothing failed.
        public var refreshInterval: Duration
        /// Where connection problems are reported.
        public var logger: Logger
        /// For a broker of plain channels (`RedisClusterPresence`'s join/leave events): every message, with its
        /// channel, goes here instead of being read as a record.
        var plainMessages: (@Sendable (_ channel: String, _ payload: [UInt8]) -> Void)?

        public init(
            address: RedisClusterAddress,
            password: String? = nil,
            prefix: String = "longlink",
            initialBackoff: Duration = .milliseconds(100),
            maxBackoff: Duration = .seconds(2),
            refreshInterval: Duration = .seconds(10),
            logger: Logger = .disabled
        ) {
            self.address = address
            self.password = password
            self.prefix = prefix
            self.initialBackoff = initialBackoff
            self.maxBackoff = maxBackoff
            self.refreshInterval = refreshInterval
            self.logger = logger
        }
    }

    /// The configuration.
    public let configuration: Configuration
    private let group: EventLoopGroup
    private let status: RedisClusterBrokerStatus
    /// The session on the broker's loop: made and bound by `start`'s job, so every job posted after `start` finds
    /// it (until `shutdown` lets go of it, or the loop finished).
    private let session: LoopBound<RedisClusterBrokerSession>

    /// Creates the broker and its loop thread; nothing connects before `start`.
    public init(configuration: Configuration) throws(BrokerError) {
        self.configuration = configuration
        status = RedisClusterBrokerStatus()
        do {
            group = try EventLoopGroup(numberOfThreads: 1)
        } catch {
            throw .unavailable("cannot start the Redis Cluster broker's loop: \(error)")
        }
        session = LoopBound(loop: group.loops[0])
    }

    /// Whether the slot map is known and every master's subscriber connection is up (the node's readiness).
    public var isConnected: Bool { status.connected.load(ordering: .acquiring) }
    /// Channels confirmed subscribed right now.
    public var activeChannelCount: Int { status.activeChannels.load(ordering: .relaxed) }
    /// Times a subscription was lost (a master lost or a slot moved) and made again.
    public var resubscribeCount: Int { status.resubscribes.load(ordering: .relaxed) }
    /// Times the slot map was read.
    public var refreshCount: Int { status.refreshes.load(ordering: .relaxed) }

    public func start(delivering handler: any BrokerDelivery) throws(BrokerError) {
        let configuration = self.configuration
        let status = self.status
        status.running.store(true, ordering: .releasing)
        let posted = session.loop.execute { [session] context in
            let made = RedisClusterBrokerSession(configuration: configuration, status: status, handler: handler, context: context)
            session.bind(made, on: context)
            made.start()
        }
        guard posted else { throw .notRunning }
    }

    public func subscribe(_ routes: [Route]) throws(BrokerError) {
        try checkAvailable()
        session.execute { $0.subscribe(routes) }
    }

    public func whenSubscribed(_ routes: [Route], _ body: @escaping @Sendable () -> Void) {
        let posted = session.loop.execute { [session] _ in
            guard let session = session.object else { return body() }
            session.whenSubscribed(routes, body)
        }
        if !posted { body() }  // shut down: the read proceeds, and no push will follow anyway
    }

    public func unsubscribe(_ routes: [Route]) throws(BrokerError) {
        session.execute { $0.unsubscribe(routes) }
    }

    /// Publishes a record with `SPUBLISH` on its slot's master (for stores that do not publish themselves).
    public func publish(_ record: OrderChangeRecord) throws(BrokerError) {
        try checkAvailable()
        session.execute { $0.publish([record]) }
    }

    public func publish(contentsOf records: [OrderChangeRecord]) throws(BrokerError) {
        try checkAvailable()
        session.execute { $0.publish(records) }
    }

    /// Publishes committed records on their lines' shard channels (for a store that `SPUBLISH`ed them on their
    /// routes' channels itself): the line-wide subscribers of every node get them from there.
    public func publishToLines(_ records: [OrderChangeRecord]) {
        guard !records.isEmpty, status.running.load(ordering: .relaxed) else { return }
        session.execute { $0.publishToLines(records) }
    }

    /// Subscribes plain shard channels (reference counted), for `plainMessages`.
    func subscribeChannels(_ names: [String]) {
        session.execute { $0.subscribeChannels(names) }
    }

    /// Releases plain shard channels.
    func unsubscribeChannels(_ names: [String]) {
        session.execute { $0.unsubscribeChannels(names) }
    }

    public func shutdown() {
        status.running.store(false, ordering: .releasing)
        guard !status.shutDown.exchange(true, ordering: .acquiringAndReleasing) else { return }
        session.loop.execute { [session] _ in
            session.object?.close()
            session.unbind()
        }
        group.shutdownGracefully()
    }

    private func checkAvailable() throws(BrokerError) {
        guard status.running.load(ordering: .acquiring) else { throw .notRunning }
        guard status.mapKnown.load(ordering: .acquiring) else {
            throw .unavailable("the Redis Cluster at \(configuration.address) is unreachable; retrying")
        }
    }
}

/// What the cluster broker's loop publishes to other threads.
final class RedisClusterBrokerStatus: Sendable {
    let running = Atomic<Bool>(false)
    let shutDown = Atomic<Bool>(false)
    let mapKnown = Atomic<Bool>(false)
    let connected = Atomic<Bool>(false)
    let activeChannels = Atomic<Int>(0)
    let resubscribes = Atomic<Int>(0)
    let refreshes = Atomic<Int>(0)
}
