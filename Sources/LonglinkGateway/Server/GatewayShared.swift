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
    /// Each loop's gateway state by loop index, for the jobs the fan-out posts: added by each loop as it starts.
    let loopGateways = Mutex<[LoopBound<LoopGateway>?]>([])
    /// Which loops hold subscribers of which routes (a commit wakes only those).
    let loopRoutes: LoopRoutes
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
        self.loopRoutes = LoopRoutes(loopCount: configuration.loopCount)
        // Other nodes' joins and leaves (Redis presence) go to every loop like this node's own.
        presence.deliverRemoteEvents { [weak self] event in
            for loop in self?.loops.withLock({ $0 }) ?? [] {
                loop.execute { context in context.attachment(LoopGateway.self)?.deliverPresenceEvent(event) }
            }
        }
    }
}

/// Receives stored records from the broker (on the broker's thread, or the thread that committed them), encodes
/// each record's push ONCE for the whole process (`FrameCodec.encodedPush`, by hand in the protobuf codec) and hands
/// the pushes to the loops that hold subscribers of their routes (`LoopRoutes`), one job per such loop, through a
/// typed handle to the loop's gateway state. A loop with no subscriber for a batch is not woken at all.
final class GatewayDelivery: BrokerDelivery {
    private let shared: GatewayShared

    init(shared: GatewayShared) { self.shared = shared }

    func brokerDidDeliver(_ record: OrderChangeRecord) {
        brokerDidDeliver(contentsOf: [record])
    }

    /// A broker that built the routes anyway (Redis) hands them along; they are not needed (lookups use `RouteKey`).
    func brokerDidDeliver(contentsOf records: [OrderChangeRecord], routes: [Route]) {
        brokerDidDeliver(contentsOf: records)
    }

    /// Encodes the pushes once and posts them to the loops that want them.
    func brokerDidDeliver(contentsOf records: [OrderChangeRecord]) {
        guard !records.isEmpty else { return }
        let gateways = shared.loopGateways.withLock { $0 }
        guard !gateways.isEmpty else { return }
        if gateways.count == 1 || !shared.loopRoutes.tracks {
            // One loop holds every subscription of this node, and the broker delivers only wanted records.
            let pushes = encode(records)
            for case let gateway? in gateways {
                gateway.loop.execute { _ in gateway.object?.deliver(pushes) }
            }
            return
        }
        var masks: [UInt64] = []
        masks.reserveCapacity(records.count)
        shared.loopRoutes.masks(for: records, into: &masks)
        var wanted = records
        if masks.contains(0) {
            // Records no loop wants (a networked broker may deliver a route a loop just left): not encoded.
            wanted = zip(records, masks).filter { $0.1 != 0 }.map(\.0)
            masks.removeAll { $0 == 0 }
            if wanted.isEmpty { return }
        }
        let pushes = encode(wanted)
        var all: UInt64 = 0
        for mask in masks { all |= mask }
        for (index, gateway) in gateways.enumerated() where all & (1 << UInt64(index)) != 0 {
            guard let gateway else { continue }
            let bit: UInt64 = 1 << UInt64(index)
            var mine: [EncodedPush] = []
            for (push, mask) in zip(pushes, masks) where mask & bit != 0 { mine.append(push) }
            let batch = mine.count == pushes.count ? pushes : mine
            gateway.loop.execute { _ in gateway.object?.deliver(batch) }
        }
    }

    /// The records' pushes, each encoded once; a record that cannot be encoded is logged here, once, and reaches
    /// its subscribers without bytes (they get nothing, as before).
    private func encode(_ records: [OrderChangeRecord]) -> [EncodedPush] {
        var pushes: [EncodedPush] = []
        pushes.reserveCapacity(records.count)
        for record in records {
            do {
                pushes.append(EncodedPush(record: record, frame: try shared.codec.encodedPush(of: record)))
            } catch {
                shared.logger.error("could not encode a push: \(error)", [("route", record.route.text)])
                pushes.append(EncodedPush(record: record, frame: nil))
            }
        }
        return pushes
    }

    func brokerMayHaveMissed(_ routes: [Route]) {
        guard !routes.isEmpty else { return }
        shared.logger.warning("the broker resubscribed after losing its backend: \(routes.count) routes resume from the store")
        for case let gateway? in shared.loopGateways.withLock({ $0 }) {
            gateway.loop.execute { _ in gateway.object?.dropSubscribers(of: routes) }
        }
    }
}

/// A stored record and its push frame, encoded once for every loop and subscriber (nil when it could not be
/// encoded).
struct EncodedPush: Sendable {
    let record: OrderChangeRecord
    let frame: [UInt8]?
}
