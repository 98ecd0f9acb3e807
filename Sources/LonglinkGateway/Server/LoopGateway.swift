import Glibc
import LonglinkCore
import LonglinkLoop
import Synchronization

/// The gateway's state on one event loop: its listener, its connections, its hub and its flush list.
/// Created on the loop thread and bound to its loop's `LoopPort` handle (made by `Gateway.start` before the loop's
/// gateway exists); jobs from other threads (deliveries, Store completions, admin requests) reach it through that
/// typed handle, `bound`.
final class LoopGateway {
    let context: LoopContext
    let shared: GatewayShared
    let frameReader: FrameReader
    /// A listening socket of this loop and how its connections are wrapped.
    struct ListenerSpec {
        var fd: CInt
        var transport: any TransportFactory
    }

    private var listeners: [Listener] = []
    private(set) var connections: [UInt64: Connection] = [:]
    let hub = Hub()
    private var pendingFlush: [Connection] = []
    /// The batch `flushPending` works on (swapped with `pendingFlush`, capacity reused).
    private var flushBatch: [Connection] = []
    /// The flush's send ring (`flush = ring`), nil when each connection sends by itself (`flush = each`, or no
    /// io_uring here); see `LoopGateway+Flush`.
    let sendRing: SendRing?
    /// For each connection of a send-ring round (see `LoopGateway+Flush`): its send's index in the submission, or
    /// a negative mark (skipped, or writes by itself).
    var stagedSends: [Int] = []
    /// Inbound storage no connection holds: a connection borrows it to read and gives it back once its frames
    /// are processed (it keeps it only while holding a partial frame).
    var spareInbound = ByteBuffer()
    /// The largest spare inbound storage kept (a burst of big frames grows a buffer beyond it).
    static let spareInboundLimit = 64 * 1024
    private var nextSerial: UInt64 = 1
    private var draining = false
    /// `GatewayConfiguration.outboundLimit`, read per delivery (kept here so no configuration struct is copied).
    let outboundLimit: Int
    /// Half the limit: reads pause at it (back-pressure), and `coalesce` holds pushes back above it.
    let outboundHighWater: Int
    /// A quarter of the limit: paused reads resume at it.
    let outboundLowWater: Int
    /// Publishes one connection may have waiting for the Store before its reads pause (one per 256 bytes of
    /// the limit: what their answers would take in the queue).
    let maxPendingPublishes: Int
    /// A peer whose reads are paused and that takes no byte for this long (the pong timeout) is cut as slow.
    let stallMillis: UInt64
    /// Whether the slow-consumer policy is `coalesce`.
    let coalescesSlowReaders: Bool
    /// `GatewayConfiguration.readBudget`, read per read event.
    let readBudget: Int
    /// Store requests were queued this iteration (they are committed together before the loop sleeps).
    var storeWorkQueued = false
    /// This loop's publishes waiting for the Store or for their answers (see `LoopGateway+Publishing`).
    var publishQueue = PublishQueue()
    /// Pushes committed for this loop's subscribers, taken before the loop sleeps (see `PushInbox`); the port's.
    let pushInbox: PushInbox
    /// The batch `takePushes` works on, and the subscriber drops between its pushes (capacities reused).
    var pushBatch: [EncodedPush] = []
    var dropBatch: [PushInbox.Drop] = []
    /// Monotonic milliseconds sampled per loop iteration.
    var nowMillis: UInt64 { context.now / 1_000_000 }
    /// Wall-clock milliseconds (token expiry compares with it).
    var wallMillis: UInt64 { shared.clock.nowMillis() }

    /// Transport handshake steps left in this iteration, and the number each iteration starts with (see
    /// `AdmissionLimits.handshakesPerIteration`; kept here, not read from the configuration every iteration).
    var handshakeTokens: Int
    let handshakesPerIteration: Int
    /// Housekeeping: slices per tick interval, and the next registration slot (fd) the sweep visits.
    private let tickSlices: Int
    private var sweepIndex = 0
    /// Connections whose handshake step waits for the next iteration's budget.
    var deferredHandshakes: [Connection] = []
    /// This loop's subscriptions that asked for presence events (connection id, route); see `LoopGateway+Presence`.
    var presenceListeners: Set<PresenceListener> = []
    /// This object with its loop, for jobs posted to it from other threads (deliveries): no lookup by type. The
    /// port's handle, bound in `init`; it keeps this object alive until the loop finishes.
    let bound: LoopBound<LoopGateway>
    /// This loop's index (its bit in `LoopRoutes`).
    var loopIndex: Int { context.eventLoop.id }

    /// Makes the gateway of `port`'s loop (call on that loop) and binds it to `port.bound`.
    init(context: LoopContext, shared: GatewayShared, port: LoopPort, listeners specs: [ListenerSpec]) throws(IOError) {
        self.context = context
        self.bound = port.bound
        self.pushInbox = port.pushes
        // Housekeeping visits every connection once per tick interval, a slice at a time, so a loop with thousands
        // of connections never stops delivering for the whole sweep at once.
        let tick = shared.configuration.tickInterval
        let slice = max(Self.minimumSliceInterval, tick / Self.slicesPerTick)
        self.tickSlices = max(1, Int(tick / slice))
        self.shared = shared
        self.frameReader = FrameReader(maxFrameSize: shared.configuration.peer.maxFrameSize)
        self.outboundLimit = shared.configuration.outboundLimit
        self.outboundHighWater = shared.configuration.outboundLimit / 2
        self.outboundLowWater = shared.configuration.outboundLimit / 4
        self.maxPendingPublishes = max(16, shared.configuration.outboundLimit / 256)
        self.stallMillis = max(1, shared.configuration.peer.pongTimeoutMillis)
        self.coalescesSlowReaders = shared.configuration.slowPolicy == .coalesce
        self.readBudget = shared.configuration.readBudget
        self.handshakesPerIteration = max(1, shared.configuration.admission.handshakesPerIteration)
        self.handshakeTokens = handshakesPerIteration
        self.sendRing = Self.makeSendRing(shared.configuration.flush, loop: context.eventLoop.id, shared: shared)
        // Before anything can fail: a loop whose listeners could not all be made keeps the gateway it has.
        bound.bind(self, on: context)
        // One call through the `unowned` reference (each access costs a strong retain and release).
        context.addBeforeSleep { [unowned self] in self.beforeSleep() }
        context.schedule(every: slice) { [unowned self] in self.tickSlice() }
        let iterations = shared.counters.loopIterationHistogram(context.eventLoop.id)
        context.addIterationObserver { busy in iterations.observe(busy) }
        for spec in specs {
            let transport = spec.transport
            let listener: Listener
            do {
                listener = try Listener(
                    fd: spec.fd,
                    on: context,
                    onError: { [unowned self] error in
                        self.shared.logger.warning("accept failed: \(error)")
                    },
                    onAccept: { [unowned self] fd in self.accept(fd, transport: transport) }
                )
            } catch {
                Socket.close(spec.fd)
                throw error
            }
            listeners.append(listener)
        }
    }

    /// The end of every iteration. A commit made here (a store that commits on its caller) hands this loop its
    /// deliveries and the publishes' results: deliver and answer them now, so this iteration's flush writes them
    /// (one iteration per publish, not two), pushes first, then what the commit posted (subscribe reads), then the
    /// answers.
    private func beforeSleep() {
        let committed = commitStoreWork()
        takePushes()
        if committed {
            context.runPostedJobs()
            answerCommittedPublishes()
        }
        flushPending()
        refillHandshakeBudget()
    }

    // MARK: Connections

    private func accept(_ fd: CInt, transport factory: any TransportFactory) {
        let counters = shared.counters
        counters.accepted.add(1, ordering: .relaxed)
        if draining || counters.connections.load(ordering: .relaxed) >= shared.configuration.maxConnections {
            counters.recordRefused(draining ? "draining" : "limit")
            refuse(fd, draining ? .shutdown : .tooManyConnections, factory: factory)
            return
        }
        let peerAddress = try? Socket.peerAddress(fd)
        let address = peerAddress?.host ?? "unknown"
        if let refusal = shared.admission.admit(address: address) {
            counters.refused.add(1, ordering: .relaxed)
            counters.recordDisconnect(refusal.code)
            refuse(fd, refusal.code, reason: refusal.reason, retryAfterMillis: refusal.retryAfterMillis, factory: factory)
            return
        }
        let transport: any Transport
        do {
            if let size = shared.configuration.socketSendBuffer { try Socket.setBufferSizes(fd, send: size) }
            transport = try factory.makeTransport(fd: fd, role: .accepted)
        } catch {
            shared.admission.release(address: address)
            Socket.close(fd)
            return
        }
        let id = nextSerial << 6 | UInt64(context.eventLoop.id & 63)
        nextSerial += 1
        let connection = Connection(id: id, sourceAddress: address, transport: transport, owner: self, nowMillis: wallMillis)
        do {
            connection.registration = try context.register(fd: fd, interest: .read, handler: connection)
        } catch {
            shared.admission.release(address: address)
            transport.close()
            return
        }
        connections[id] = connection
        counters.connections.add(1, ordering: .relaxed)
        connection.transportName = TransportName(factory)
        counters.transportOpened(connection.transportName)
        connection.startHandshake()
    }

    /// Answers a connection we will not serve with a numbered disconnect, best effort, and closes it.
    /// The bytes go out in the clear, before any transport handshake: a TLS client sees a failed handshake and
    /// retries later, as it would for any refused connection.
    /// A transport with its own way of refusing (WebSocket: an HTTP 503) answers in it instead.
    private func refuse(
        _ fd: CInt,
        _ code: DisconnectCode,
        reason: String? = nil,
        retryAfterMillis: UInt32 = 1_000,
        factory: any TransportFactory
    ) {
        let reason = reason ?? (code == .shutdown ? "server draining" : "connection limit reached")
        let disconnect = Disconnect(code: code, reason: reason, reconnectAfterMillis: retryAfterMillis)
        let bytes = factory.refusal(code: code.rawValue, reason: reason, retryAfterMillis: retryAfterMillis) ?? encode(.disconnect(disconnect)) ?? []
        if !bytes.isEmpty { _ = bytes.withUnsafeBytes { try? Socket.write(fd, $0) } }
        Socket.close(fd)
    }

    func connectionClosed(_ connection: Connection, reason: String) {
        guard connections.removeValue(forKey: connection.id) != nil else { return }
        shared.counters.connections.subtract(1, ordering: .relaxed)
        shared.counters.transportClosed(connection.transportName)
        shared.admission.release(address: connection.sourceAddress)
        shared.logger.debug(
            "connection closed: \(reason)",
            [("conn", connection.clientID), ("user", connection.peer.principal?.userID ?? "-")]
        )
        if draining && connections.isEmpty { finishDrain() }
    }

    /// Closes a connection whose disconnect frame could not be flushed within a second (a stalled reader).
    func scheduleForcedClose(_ connection: Connection) {
        context.schedule(after: .seconds(1)) { [weak connection] in
            connection?.close(reason: "disconnect not flushed in time")
        }
    }

    // MARK: Writing

    /// Before sleeping: commits the publishes and subscribe reads this iteration queued (on this thread when the
    /// store commits on its caller, else by waking the writer); false when none was queued.
    private func commitStoreWork() -> Bool {
        guard storeWorkQueued else { return false }
        storeWorkQueued = false
        commitPublishes()
        shared.store.commitQueued()
        return true
    }

    func scheduleFlush(_ connection: Connection) {
        guard !connection.flushScheduled else { return }
        connection.flushScheduled = true
        pendingFlush.append(connection)
    }

    /// Before sleeping: write every connection that queued bytes this iteration: through the send ring (one
    /// system call for all of them), or one `send`/`sendmsg` each.
    private func flushPending() {
        guard !pendingFlush.isEmpty else { return }
        // Swapped, not copied: copying and then emptying `pendingFlush` with its capacity kept allocated a new
        // array as big as the old (80 KB at 10,000 connections) on every flush, and freeing the old one made glibc
        // consolidate its free lists.
        swap(&pendingFlush, &flushBatch)
        if let sendRing {
            flush(flushBatch, through: sendRing)
        } else {
            for connection in flushBatch { connection.flush(owner: self) }
        }
        flushBatch.removeAllKeepingStorage()
    }

    /// Encodes one frame for one connection (control frames; pushes are encoded once per record elsewhere).
    func encode(_ frame: ServerFrame) -> [UInt8]? {
        do {
            return try shared.codec.encodedFrame(frame)
        } catch {
            shared.logger.error("encode failed: \(error)")
            return nil
        }
    }

    // MARK: Subscriptions

    func subscribe(_ connection: Connection, to route: Route, since: StreamPosition?, requestID: UInt32) {
        let added = hub.add(connection, to: route)
        // Deliveries pass the hub's copy of the route: the peer keys its subscription by that copy, so finding it
        // per delivery compares one pointer (the copies' texts are equal but stored apart).
        connection.peer.adoptRoute(added.route)
        if added.first {
            // Before the broker and the snapshot read: every commit after the read finds this loop.
            shared.loopRoutes.add(route, loop: loopIndex)
            do {
                try shared.broker.subscribe([route])
            } catch {
                _ = hub.remove(connection, from: route)
                shared.loopRoutes.remove(route, loop: loopIndex)
                shared.counters.brokerErrors.add(1, ordering: .relaxed)
                connection.perform(connection.peer.subscribeFailed(route: route, error: .storage("\(error)", retryable: true)))
                return
            }
        }
        shared.counters.subscriptions.add(1, ordering: .relaxed)
        presenceJoined(connection, route)
        if route.isLineWide {
            subscribeLineWide(connection, to: route)
            return
        }
        if route.kind == .config {
            let bound = self.bound
            let connectionID = connection.id
            let shared = self.shared
            // As for orders below: read the toggle only once a networked broker confirmed the subscription, or a
            // toggle set on another node between the read and the confirmation reaches nobody (seen under load:
            // a follower got the first of three values and never the other two).
            shared.broker.whenSubscribed([route]) {
                shared.store.readToggleForSubscribe(route, since: since) { result in
                    bound.execute { $0.subscribeRead(connectionID, route: route, result: result) }
                }
            }
            return
        }
        guard let (line, order) = route.order else {
            // Other route kinds have no stored content: answer with an empty snapshot.
            connection.perform(
                connection.peer.subscribeCompleted(route: route, read: SubscribeRead(epoch: 0, snapshot: nil, history: nil))
            )
            return
        }
        let bound = self.bound
        let connectionID = connection.id
        let shared = self.shared
        // A networked broker (Redis) confirms the subscription asynchronously: read the snapshot only then, so a
        // record published meanwhile on another node is either in the snapshot or pushed after it.
        // On this loop (an in-process broker answers at once) the read is queued and committed before the loop
        // sleeps, with this iteration's other store requests.
        shared.broker.whenSubscribed([route]) {
            let completion: @Sendable (Result<SubscribeRead, StoreError>) -> Void = { result in
                bound.execute { $0.subscribeRead(connectionID, route: route, result: result) }
            }
            let limit = shared.configuration.peer.maxRecoveredRecords + 1
            if bound.loop.inEventLoop {
                shared.store.readForSubscribeQueued(line, order, since: since, limit: limit, completion: completion)
            } else {
                shared.store.readForSubscribe(line, order, since: since, limit: limit, completion: completion)
            }
        }
        storeWorkQueued = true
    }

    /// The broker may have missed records of `routes` (it lost its backend and resubscribed): their subscribers
    /// are disconnected with a reconnect code, and resume from their positions through the store.
    func dropSubscribers(of routes: [Route]) {
        var seen = Set<ObjectIdentifier>()
        var affected: [Connection] = []
        for route in routes {
            hub.forEachSubscriber(of: route) { connection in
                if seen.insert(ObjectIdentifier(connection)).inserted { affected.append(connection) }
            }
        }
        for connection in affected where !connection.isClosed {
            connection.perform(
                connection.peer.disconnect(.serverError, reason: "the broker reconnected; resume to recover missed records")
            )
        }
    }

    func subscribeRead(_ connectionID: UInt64, route: Route, result: Result<SubscribeRead, StoreError>) {
        guard let connection = connections[connectionID], !connection.isClosed else { return }
        switch result {
        case .success(let read):
            let actions = connection.peer.subscribeCompleted(route: route, read: read)
            for case .send(.subscribed(let subscribed)) in actions where read.history != nil {
                if subscribed.recovered {
                    shared.counters.recoveries.add(1, ordering: .relaxed)
                } else {
                    shared.counters.recoveriesFailed.add(1, ordering: .relaxed)
                }
            }
            connection.perform(actions)
        case .failure(let error):
            shared.counters.storeErrors.add(1, ordering: .relaxed)
            connection.perform(connection.peer.subscribeFailed(route: route, error: error))
        }
    }

    func unsubscribe(_ connection: Connection, from route: Route) {
        let (removed, emptied) = hub.remove(connection, from: route)
        if removed {
            shared.counters.subscriptions.subtract(1, ordering: .relaxed)
            presenceLeft(connection, route)
        }
        if emptied {
            shared.loopRoutes.remove(route, loop: loopIndex)
            try? shared.broker.unsubscribe([route])
        }
    }

    // MARK: Time

    /// Housekeeping slices per tick interval (fewer when the interval is short: a slice is at least 10 ms).
    static let slicesPerTick = 50
    static let minimumSliceInterval = Duration.milliseconds(10)

    /// One slice of housekeeping (handshake deadlines, heartbeats, token expiry, idle outbound storage): the
    /// connections registered on the next share of the loop's fd slots. Walking the slots copies nothing (a copy of
    /// the connection list per sweep was 8 bytes per connection, and idle memory per connection is a budget).
    private func tickSlice() {
        let slots = context.registrationSlots
        guard slots > 0 else { return }
        if sweepIndex >= slots { sweepIndex = 0 }
        let end = min(slots, sweepIndex + (slots + tickSlices - 1) / tickSlices)
        let now = wallMillis
        let monotonicNow = nowMillis
        let queueSizes = shared.counters.outboundQueueBytes
        // Empty queues (nearly all of them) are counted here and observed once for the slice: three atomic
        // updates per slice instead of per connection.
        var emptyQueues = 0
        defer { queueSizes.observe(0, count: emptyQueues) }
        for fd in sweepIndex..<end {
            guard let connection = context.handler(of: fd) as? Connection, !connection.isClosed else { continue }
            let queued = connection.queuedBytes
            if queued == 0 { emptyQueues += 1 } else { queueSizes.observe(UInt64(queued)) }
            connection.checkStalled(nowMillis: monotonicNow)
            guard !connection.isClosed else { continue }
            let actions = connection.peer.tick(nowMillis: now)
            if !actions.isEmpty { connection.perform(actions) }
            if !connection.flushScheduled { connection.outbound.releaseStorageIfEmpty() }
        }
        sweepIndex = end
    }

    // MARK: Drain

    /// Stops accepting and disconnects every client with `shutdown`, paced over the drain period, each told to
    /// come back after a random delay within it (so the fleet does not reconnect at once elsewhere).
    func drain() {
        guard !draining else { return }
        draining = true
        for listener in listeners { listener.close() }
        listeners.removeAll()
        let all = Array(connections.values)
        guard !all.isEmpty else {
            finishDrain()
            return
        }
        let periodMillis = max(1, Int(shared.configuration.drainPeriod.components.seconds * 1000
            + shared.configuration.drainPeriod.components.attoseconds / 1_000_000_000_000_000))
        let step = 50
        let rounds = max(1, periodMillis / step)
        let perRound = max(1, (all.count + rounds - 1) / rounds)
        var remaining = all[...]
        func sendRound() {
            for connection in remaining.prefix(perRound) where !connection.isClosed {
                let delay = UInt32(Int.random(in: 0...periodMillis))
                connection.perform(connection.peer.drain(reconnectAfterMillis: delay))
            }
            remaining = remaining.dropFirst(perRound)
            if !remaining.isEmpty {
                context.schedule(after: .milliseconds(step)) { sendRound() }
            }
        }
        sendRound()
    }

    private func finishDrain() {
        shared.drainedLoops.add(1, ordering: .relaxed)
    }

    /// Connections open on this loop.
    var connectionCount: Int { connections.count }
}

@available(*, unavailable)
extension LoopGateway: Sendable {}
