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
    /// Each loop's gateway handle and push inbox by loop index, for the fan-out and every job posted to a loop's
    /// gateway: set by `Gateway.start` once the loops exist (each handle is bound once that loop made its gateway).
    let loopGateways = Mutex<[LoopPort]>([])
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
            for port in self?.loopGateways.withLock({ $0 }) ?? [] {
                port.bound.execute { $0.deliverPresenceEvent(event) }
            }
        }
    }
}

/// Receives stored records from the broker (on the broker's thread, or the thread that committed them), encodes
/// each record's push ONCE for the whole process (`FrameCodec.encodedPush`, by hand in the protobuf codec) and hands
/// the pushes to the loops that hold subscribers of their routes (`LoopRoutes`), into each such loop's
/// `PushInbox`. A loop with no subscriber for a batch is not woken at all, and a loop that committed the batch
/// itself takes its pushes before it sleeps, with no job.
final class GatewayDelivery: BrokerDelivery {
    private let shared: GatewayShared
    /// The ring of push frames of the threads that are not loops (the Store writer, a broker's thread).
    private let foreignFrames = PushFrameRing()

    init(shared: GatewayShared) { self.shared = shared }

    func brokerDidDeliver(_ record: OrderChangeRecord) {
        deliverToLoops(CollectionOfOne(record))
    }

    /// A broker that built the routes anyway (Redis) hands them along; they are not needed (lookups use `RouteKey`).
    func brokerDidDeliver(contentsOf records: [OrderChangeRecord], routes: [Route]) {
        brokerDidDeliver(contentsOf: records)
    }

    func brokerDidDeliver(contentsOf records: [OrderChangeRecord]) {
        deliverToLoops(records)
    }

    /// Encodes the pushes once, into the ring of frames of the thread that commits (`PushFrameRing`: its loop's, or
    /// the one of the threads that are not loops), and hands them to the loops that want them.
    /// (Inlined into its two callers: specialised for one record and for an array.)
    @inline(__always)
    private func deliverToLoops(_ records: some RandomAccessCollection<OrderChangeRecord>) {
        guard !records.isEmpty else { return }
        let ports = shared.loopGateways.withLock { $0 }
        guard !ports.isEmpty else { return }
        var ring = foreignFrames
        for index in ports.indices where ports[index].bound.loop.inEventLoop {
            ring = ports[index].frames
            break
        }
        ring.withFrames { frames in hand(records, to: ports, encodingInto: &frames) }
    }

    /// Hands each record's push to the loops that want it, encoding it into `frames` once.
    @inline(__always)
    private func hand(
        _ records: some RandomAccessCollection<OrderChangeRecord>,
        to ports: [LoopPort],
        encodingInto frames: inout PushFrameRing.Frames
    ) {
        if ports.count == 1 || !shared.loopRoutes.tracks {
            // One loop holds every subscription of this node, and the broker delivers only wanted records: the
            // pushes are encoded straight into the inbox.
            if ports.count == 1 {
                ports[0].hand { pushes in
                    for record in records { pushes.append(encode(record, &frames)) }
                }
                return
            }
            let encoded = records.map { encode($0, &frames) }
            for port in ports {
                port.hand { $0.append(contentsOf: encoded) }
            }
            return
        }
        // The ring's scratch arrays, taken out while the ring encodes (and put back emptied): no array is
        // allocated per batch.
        var masks: [UInt64] = []
        var pushes: [EncodedPush?] = []
        swap(&masks, &frames.loopMasks)
        swap(&pushes, &frames.pushes)
        defer {
            masks.removeAll(keepingCapacity: true)
            pushes.removeAll(keepingCapacity: true)
            swap(&masks, &frames.loopMasks)
            swap(&pushes, &frames.pushes)
        }
        shared.loopRoutes.masks(for: records, into: &masks)
        var all: UInt64 = 0
        for mask in masks { all |= mask }
        guard all != 0 else { return }
        // Records no loop wants (a networked broker may deliver a route a loop just left) are not encoded.
        for (record, mask) in zip(records, masks) { pushes.append(mask == 0 ? nil : encode(record, &frames)) }
        for (index, port) in ports.enumerated() where all & (1 << UInt64(index)) != 0 {
            let bit: UInt64 = 1 << UInt64(index)
            port.hand { inbox in
                for (push, mask) in zip(pushes, masks) where mask & bit != 0 {
                    if let push { inbox.append(push) }
                }
            }
        }
    }

    /// A record's push, encoded once; a record that cannot be encoded is logged here, once, and reaches its
    /// subscribers without bytes (they get nothing, as before).
    private func encode(_ record: OrderChangeRecord, _ frames: inout PushFrameRing.Frames) -> EncodedPush {
        do {
            return EncodedPush(record: record, frame: try frames.push(of: record, with: shared.codec))
        } catch {
            shared.logger.error("could not encode a push: \(error)", [("route", record.route.text)])
            return EncodedPush(record: record, frame: nil)
        }
    }

    func brokerMayHaveMissed(_ routes: [Route]) {
        guard !routes.isEmpty else { return }
        shared.logger.warning("the broker resubscribed after losing its backend: \(routes.count) routes resume from the store")
        // Through the push inboxes, in order with the pushes: a push the broker delivers after this must not reach
        // a subscriber before it is dropped (it would skip the records missed in between, and resume after them).
        for port in shared.loopGateways.withLock({ $0 }) {
            port.handDrop(of: routes)
        }
    }
}

/// One loop as the fan-out reaches it: its gateway state (for jobs) and its push inbox. Made by `Gateway.start` for
/// each loop before the loop's gateway exists (`bound` is bound when it does), so a job posted to any loop can hold
/// the handle; the loop's gateway is made by the loop's first job, so every later job finds it.
struct LoopPort: Sendable {
    let bound: LoopBound<LoopGateway>
    let pushes: PushInbox
    /// The ring of push frames this loop encodes into when it commits.
    let frames = PushFrameRing()

    /// Appends pushes to the loop's inbox (`body` appends them), and asks the loop to take them when it is not the
    /// caller's own loop and no take is pending.
    func hand(_ body: (inout [EncodedPush]) -> Void) {
        guard pushes.append(fromLoop: bound.loop.inEventLoop, body) else { return }
        askToTake()
    }

    /// Queues a drop of `routes`' subscribers behind the pushes already handed to the loop.
    func handDrop(of routes: [Route]) {
        guard pushes.appendDrop(of: routes, fromLoop: bound.loop.inEventLoop) else { return }
        askToTake()
    }

    private func askToTake() {
        let bound = self.bound
        bound.execute { $0.takePushes() }
    }
}

/// A stored record and its push frame, encoded once for every loop and subscriber (nil when it could not be
/// encoded).
struct EncodedPush: Sendable {
    let record: OrderChangeRecord
    let frame: [UInt8]?
}
