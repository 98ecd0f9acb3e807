import LonglinkCore
import LonglinkLoop
import Synchronization

/// What every loop of one gateway shares: immutable configuration and the thread-safe collaborators injected
/// at start (codec, Store access, broker, authorizer), plus the process-wide counters.
final class GatewayShared: Sendable {
    let configuration: GatewayConfiguration
    let codec: any FrameCodec
    let store: StoreAccess
    let broker: any Broker
    let authorizer: any Authorizer
    /// Settings and authorizer shared by every peer.
    let peerContext: PeerContext
    let logger: Logger
    let counters: GatewayCounters
    let receipts = ReceiptBook()
    let clock: any WallClock
    /// The loops, set once they exist (read by completions to find a connection's loop).
    let loops = Mutex<[EventLoop]>([])
    /// Loops that finished draining.
    let drainedLoops = Atomic<Int>(0)
    /// Connection rate and per-address limits, shared by every loop.
    let admission: ConnectionAdmission
    /// Who is subscribed where (this node, or every node through Redis).
    let presence: any PresenceStore
    /// Subscriptions on this node that asked for presence events: while 0, joins and leaves are not announced.
    let presenceListenerCount = Atomic<Int>(0)

    init(
        configuration: GatewayConfiguration,
        codec: any FrameCodec,
        store: StoreAccess,
        broker: any Broker,
        authorizer: any Authorizer,
        logger: Logger,
        counters: GatewayCounters,
        clock: any WallClock,
        presence: any PresenceStore = LocalPresence()
    ) {
        self.presence = presence
        self.configuration = configuration
        self.codec = codec
        self.store = store
        self.broker = broker
        self.authorizer = authorizer
        self.peerContext = PeerContext(settings: configuration.peer, authorizer: authorizer)
        self.logger = logger
        self.counters = counters
        self.clock = clock
        self.admission = ConnectionAdmission(limits: configuration.admission, nowNanos: MonotonicClock.nanoseconds())
        // Other nodes' joins and leaves (Redis presence) go to every loop like this node's own.
        presence.deliverRemoteEvents { [weak self] event in
            for loop in self?.loops.withLock({ $0 }) ?? [] {
                loop.execute { context in context.attachment(LoopGateway.self)?.deliverPresenceEvent(event) }
            }
        }
    }
}

/// Receives stored records from the broker (on the broker's thread, or the thread that committed them) and hands
/// each loop ONE job per batch. Each loop encodes a record's push once, when the record's first subscriber on that
/// loop takes it, and queues the same bytes for all of them: the encoding is spread over the loops that have
/// subscribers instead of weighing on the committing thread, and a record nobody on a loop wants costs that loop a
/// hub lookup only.
final class GatewayDelivery: BrokerDelivery {
    private let shared: GatewayShared

    init(shared: GatewayShared) { self.shared = shared }

    func brokerDidDeliver(_ record: OrderChangeRecord) {
        brokerDidDeliver(contentsOf: [record])
    }

    /// Builds each record's route once (its text is copied from the record's parts) for every loop to look up.
    func brokerDidDeliver(contentsOf records: [OrderChangeRecord]) {
        brokerDidDeliver(contentsOf: records, routes: records.map(\.route))
    }

    /// Hands the batch and its routes to every loop, one job per loop.
    func brokerDidDeliver(contentsOf records: [OrderChangeRecord], routes: [Route]) {
        guard !records.isEmpty else { return }
        for loop in shared.loops.withLock({ $0 }) {
            loop.execute { context in context.attachment(LoopGateway.self)?.deliver(records, on: routes) }
        }
    }

    func brokerMayHaveMissed(_ routes: [Route]) {
        guard !routes.isEmpty else { return }
        shared.logger.warning("the broker resubscribed after losing its backend: \(routes.count) routes resume from the store")
        for loop in shared.loops.withLock({ $0 }) {
            loop.execute { context in context.attachment(LoopGateway.self)?.dropSubscribers(of: routes) }
        }
    }
}
