import LonglinkCore
import LonglinkLoop
import Synchronization

/// What every loop of one gateway shares: immutable configuration and the thread-safe collaborators injected
/// at start (codec, Store access, broker, authorizer), plus the process-wide counters.
final class GatewayShared: Sendable {
    let configuration: GatewayConfiguration
    let codec: any FrameCodec
    let store: any StoreAccess
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

    init(
        configuration: GatewayConfiguration,
        codec: any FrameCodec,
        store: any StoreAccess,
        broker: any Broker,
        authorizer: any Authorizer,
        logger: Logger,
        counters: GatewayCounters,
        clock: any WallClock
    ) {
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
    }
}

/// One record ready for the loops: its route (built once), the record (offsets and the slow-consumer policy need it)
/// and its push frame, encoded once and shared by every subscriber's outbound queue.
struct EncodedPush: Sendable {
    let route: Route
    let record: OrderChangeRecord
    let bytes: [UInt8]
}

/// Receives stored records from the broker (on the broker's thread, or the thread that committed them), encodes
/// each push once, and hands each loop ONE job per batch holding the same bytes for every loop, which queue them
/// for their subscribers.
final class GatewayDelivery: BrokerDelivery {
    private let shared: GatewayShared
    private let scratch = Mutex(ByteBuffer(capacity: 1024))

    init(shared: GatewayShared) { self.shared = shared }

    func brokerDidDeliver(_ record: OrderChangeRecord) {
        brokerDidDeliver(contentsOf: [record])
    }

    func brokerDidDeliver(contentsOf records: [OrderChangeRecord]) {
        let pushes = encode(records)
        guard !pushes.isEmpty else { return }
        for loop in shared.loops.withLock({ $0 }) {
            loop.execute { context in context.attachment(LoopGateway.self)?.deliver(pushes) }
        }
    }

    /// Encodes every record's push once (records that cannot be encoded are logged and skipped).
    private func encode(_ records: [OrderChangeRecord]) -> [EncodedPush] {
        var failed: [Route] = []
        let pushes = scratch.withLock { buffer -> [EncodedPush] in
            var pushes: [EncodedPush] = []
            pushes.reserveCapacity(records.count)
            for record in records {
                let route = record.route
                buffer.clear()
                do {
                    try shared.codec.encode(.push(Push(route: route, record: record)), into: &buffer)
                } catch {
                    failed.append(route)
                    continue
                }
                pushes.append(EncodedPush(route: route, record: record, bytes: buffer.readableArray))
            }
            return pushes
        }
        for route in failed { shared.logger.error("could not encode a push", [("route", route.text)]) }
        return pushes
    }

    func brokerMayHaveMissed(_ routes: [Route]) {
        guard !routes.isEmpty else { return }
        shared.logger.warning("the broker resubscribed after losing its backend: \(routes.count) routes resume from the store")
        for loop in shared.loops.withLock({ $0 }) {
            loop.execute { context in context.attachment(LoopGateway.self)?.dropSubscribers(of: routes) }
        }
    }
}
