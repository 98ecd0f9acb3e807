public import LonglinkCore
import LonglinkLoop
import Synchronization

/// The `Broker` for several gateway nodes: Redis pub/sub, with the channel scheme of `RedisChannelScheme`
/// (one channel per route by default; see there for the sharded alternative and the trade-off).
///
/// Threading: the broker runs its own `EventLoop` thread (`longlink-loop-…` of a one-loop group) holding two
/// non-blocking `RedisConnection`s, one subscribed and one for `PUBLISH`. A dedicated loop keeps Redis latency
/// and reconnect back-off away from the gateway loops (a slow Redis never stalls client I/O), gives one place
/// where a route's records arrive in order, and needs no locking around the connections. Gateway loops call
/// `subscribe`/`unsubscribe`/`publish` from their threads; the calls become jobs in the broker loop's inbox.
/// Records received are decoded once, filtered against the routes this node holds, and handed to the
/// `BrokerDelivery` (the gateway), which hops to the gateway loops through their inboxes.
///
/// With `RedisOrderStore` the apply script already `PUBLISH`es each record, so the composition does not
/// register a broker publisher (`publish` is for stores that do not publish, e.g. SQLite plus a Redis broker on
/// a single node).
///
/// Failure behaviour:
/// - Redis unreachable at start: `start` logs a clear error and keeps retrying with exponential back-off and
///   jitter (100 ms doubling to 5 s); `isConnected` stays false, and `subscribe`/`publish` throw
///   `.unavailable` (the gateway answers `unavailable`, which clients retry).
/// - Connection lost while running: same back-off; on reconnect every channel is subscribed again in one
///   pipelined write (1,000 channels per `SUBSCRIBE`), and once confirmed the delivery is told
///   (`brokerMayHaveMissed`) so subscribers of those routes resume from their positions through the store.
public final class RedisBroker: Broker {
    /// How to reach Redis and name channels.
    public struct Configuration: Sendable {
        /// The server (the database number does not matter to pub/sub).
        public var address: RedisAddress
        /// Sent with `AUTH` when set.
        public var password: String?
        /// The key and channel prefix (the same as the store's).
        public var prefix: String
        /// How routes map to channels (the same on every node and in the store).
        public var channels: RedisChannelScheme
        /// The first reconnect delay; doubles per failed attempt.
        public var initialBackoff: Duration
        /// The longest reconnect delay.
        public var maxBackoff: Duration
        /// Where connection problems are reported.
        public var logger: Logger

        public init(
            address: RedisAddress,
            password: String? = nil,
            prefix: String = "longlink",
            channels: RedisChannelScheme = .perRoute,
            initialBackoff: Duration = .milliseconds(100),
            maxBackoff: Duration = .seconds(5),
            logger: Logger = .disabled
        ) {
            self.address = address
            self.password = password
            self.prefix = prefix
            self.channels = channels
            self.initialBackoff = initialBackoff
            self.maxBackoff = maxBackoff
            self.logger = logger
        }
    }

    /// The configuration.
    public let configuration: Configuration
    private let group: EventLoopGroup
    private let status: RedisBrokerStatus
    /// The session on the broker's loop: made and bound by `start`'s job, so every job posted after `start` finds
    /// it (until `shutdown` lets go of it, or the loop finished).
    private let session: LoopBound<RedisBrokerSession>

    /// Creates the broker and its loop thread; nothing connects before `start`.
    public init(configuration: Configuration) throws(BrokerError) {
        self.configuration = configuration
        status = RedisBrokerStatus()
        do {
            group = try EventLoopGroup(numberOfThreads: 1)
        } catch {
            throw .unavailable("cannot start the Redis broker's loop: \(error)")
        }
        session = LoopBound(loop: group.loops[0])
    }

    /// Whether both connections to Redis are up (the node's readiness).
    public var isConnected: Bool { status.connected.load(ordering: .acquiring) }
    /// Channels confirmed subscribed right now.
    public var activeChannelCount: Int { status.activeChannels.load(ordering: .relaxed) }
    /// Times a lost connection was re-established.
    public var reconnectCount: Int { status.reconnects.load(ordering: .relaxed) }

    public func start(delivering handler: any BrokerDelivery) throws(BrokerError) {
        let configuration = self.configuration
        let status = self.status
        status.running.store(true, ordering: .releasing)
        let posted = session.loop.execute { [session] context in
            let made = RedisBrokerSession(configuration: configuration, status: status, handler: handler, context: context)
            session.bind(made, on: context)
            made.connect()
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

    /// Publishes a record (for stores that do not publish themselves). Throws `.unavailable` while Redis is
    /// unreachable; a record accepted here and lost with the connection before it was written is logged.
    public func publish(_ record: OrderChangeRecord) throws(BrokerError) {
        try checkAvailable()
        session.execute { $0.publish(record) }
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
        guard status.connected.load(ordering: .acquiring) else {
            throw .unavailable("Redis at \(configuration.address) is unreachable; retrying")
        }
    }
}

/// What the broker's loop publishes to other threads.
final class RedisBrokerStatus: Sendable {
    let running = Atomic<Bool>(false)
    let shutDown = Atomic<Bool>(false)
    let connected = Atomic<Bool>(false)
    let activeChannels = Atomic<Int>(0)
    let reconnects = Atomic<Int>(0)
}
