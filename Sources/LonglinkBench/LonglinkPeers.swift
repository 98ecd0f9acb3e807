import Glibc
import LonglinkCore
import LonglinkLoop

/// One benchmark subscriber on Longlink: connects, subscribes to its route, and checks every push's sequence
/// and latency. After a cut it can reconnect and resume from the last position it saw (storm); with
/// `reconnectsAfterLoss` it does so by itself whenever the server goes away (storm --restart). Loop-confined.
final class LonglinkSubscriber: BenchConnectionDelegate, BenchSubscriber {
    let index: Int
    /// The route's index in the workload.
    private(set) var route: Int
    private var routeText: String
    private var routeBytes: [UInt8]
    private let endpoint: BenchEndpoint
    private unowned let context: LoopContext
    private let counters: BenchCounters
    private let recorder: LoopRecorder
    private var connection: BenchConnection?
    /// Whether a lost connection (after the first subscription) is reconnected with resume instead of counted as
    /// a failure: storm --restart, where the server dies and comes back.
    var reconnectsAfterLoss = false
    /// The current reconnect back-off (0 = none pending).
    private var reconnectDelayMillis = 0
    /// The last sequence delivered (from the payload).
    private(set) var lastSequence: UInt64 = 0
    /// The last position seen, for resuming.
    private(set) var lastPosition: StreamPosition?
    /// Whether a subscription is confirmed on the current connection.
    private(set) var isSubscribed = false
    /// Whether the owner closed it on purpose (no failure is counted then).
    private var closing = false
    /// Counts `connected` on the first handshake only (storm counts reconnects separately).
    private var everConnected = false
    /// Whether a subscription was ever confirmed (a later one after a cut is a resubscription).
    private var everSubscribed = false
    /// Called when the subscription is confirmed (after a reconnect too).
    var onSubscribed: ((LonglinkSubscriber) -> Void)?
    /// Called when the subscription is confirmed again after a cut and reconnect (storm).
    var onResubscribed: ((LonglinkSubscriber) -> Void)?
    /// Called when a push arrives, after it was counted, with its payload sequence (orders: follow the next order).
    var onPush: ((LonglinkSubscriber, UInt64) -> Void)?
    /// Called when the connection ends without `close()`.
    var onLost: ((LonglinkSubscriber) -> Void)?

    init(
        index: Int,
        route: Int,
        routeText: String,
        endpoint: BenchEndpoint,
        context: LoopContext,
        counters: BenchCounters
    ) {
        self.index = index
        self.route = route
        self.routeText = routeText
        self.routeBytes = Array(routeText.utf8)
        self.endpoint = endpoint
        self.context = context
        self.counters = counters
        self.recorder = context.attachment(LoopRecorder.self)!
    }

    /// Opens the connection; failures are counted, not thrown.
    func start() {
        do {
            connection = try BenchConnection(
                index: index,
                endpoint: endpoint,
                connectFrame: LonglinkFrames.connect,
                context: context,
                delegate: self
            )
        } catch {
            if reconnectsAfterLoss && everSubscribed { return scheduleReconnect() }
            counters.fail(BenchConnection.reason(error, during: "connect"))
        }
    }

    /// Tries again after 20 ms, doubling up to 250 ms, each delay jittered by half so that S clients do not hit a
    /// restarting server in the same millisecond.
    private func scheduleReconnect() {
        counters.reconnects.add(1)
        reconnectDelayMillis = reconnectDelayMillis == 0 ? 20 : min(2 * reconnectDelayMillis, 250)
        let delay = reconnectDelayMillis / 2 + Int.random(in: 0...(reconnectDelayMillis / 2))
        context.schedule(after: .milliseconds(Int64(delay))) { [weak self] in
            guard let self, !self.closing, self.connection == nil else { return }
            self.start()
        }
    }

    /// Whether `start()` could not open a socket.
    var failedToStart: Bool { connection == nil && !closing }

    /// Closes the connection quietly.
    func close() {
        closing = true
        connection?.close()
        connection = nil
    }

    /// Moves the connection's reads to the loop's io_uring (plain TCP only); returns whether it did.
    @discardableResult
    func readThroughRing(_ reader: BenchUringReader) -> Bool { connection?.readThroughRing(reader) ?? false }

    /// Cuts the connection with a reset, as a network loss would (storm).
    func cut() {
        isSubscribed = false
        let old = connection
        connection = nil
        old?.abort()
    }

    /// Unsubscribes from the current route and subscribes to `route` (orders: the next order of a slot).
    func move(to route: Int, routeText: String) {
        guard let connection, connection.isOpen else { return }
        connection.send(.unsubscribe(UnsubscribeRequest(requestID: 2, route: self.routeText)))
        self.route = route
        self.routeText = routeText
        self.routeBytes = Array(routeText.utf8)
        lastPosition = nil
        isSubscribed = false
        connection.send(.subscribe(SubscribeRequest(requestID: 1, route: routeText)))
    }

    func connectionDidConnect(_ connection: BenchConnection) {
        counters.countTLSHandshake(of: connection)
        if !everConnected {
            everConnected = true
            counters.connected.add(1)
            recorder.connect.record(MonotonicClock.nanoseconds() &- connection.startedAt)
        }
        connection.send(.subscribe(SubscribeRequest(requestID: 1, route: routeText, since: lastPosition)))
    }

    func connection(_ connection: BenchConnection, didReceive frame: ServerFrame) {
        switch frame {
        case .subscribed(let subscribed):
            guard subscribed.route.text == routeText else { return }
            for record in subscribed.missed {
                deliver(record, recovered: true)
            }
            if lastPosition != nil && !subscribed.recovered { counters.notRecovered.add(1) }
            if let snapshot = subscribed.snapshot,
                let stamp = snapshot.fields.payload.withUnsafeBytes({ BenchPayload.read($0) }), stamp.sequence > lastSequence
            {
                counters.coveredBySnapshot.add(Int(stamp.sequence - lastSequence))
                lastSequence = stamp.sequence
            }
            let resumed = lastPosition != nil
            lastPosition = subscribed.position
            reconnectDelayMillis = 0
            if !isSubscribed {
                isSubscribed = true
                if resumed && everSubscribed { onResubscribed?(self) } else { onSubscribed?(self) }
                everSubscribed = true
            }
        case .push(let push):
            guard push.route.text == routeText else { return }
            deliver(push.record, recovered: false)
            onPush?(self, lastSequence)
        case .error(let error):
            counters.fail("error frame: \(error.code)")
        default:
            break
        }
    }

    func connection(_ connection: BenchConnection, didReceivePush push: PushView) {
        guard push.route.count == routeBytes.count,
            routeBytes.withUnsafeBytes({ memcmp($0.baseAddress!, push.route.baseAddress!, push.route.count) }) == 0
        else { return }
        lastPosition = StreamPosition(epoch: push.epoch, offset: push.offset)
        guard let stamp = BenchPayload.read(push.payload) else { return }
        deliver(stamp, recovered: false, at: connection.receivedAt)
        onPush?(self, stamp.sequence)
    }

    func connectionDidClose(_ connection: BenchConnection, error: String?) {
        guard connection === self.connection else { return }  // an old, cut connection
        self.connection = nil
        isSubscribed = false
        if closing { return }
        if reconnectsAfterLoss && everSubscribed { return scheduleReconnect() }
        counters.fail(error ?? "closed")
        onLost?(self)
    }

    /// Reconnects after a cut, resuming from `lastPosition`.
    func reconnect() {
        closing = false
        start()
    }

    private func deliver(_ record: OrderChangeRecord, recovered: Bool) {
        lastPosition = record.position
        guard let stamp = record.fields.payload.withUnsafeBytes({ BenchPayload.read($0) }) else { return }
        deliver(stamp, recovered: recovered, at: connection?.receivedAt ?? MonotonicClock.nanoseconds())
    }

    /// Counts one delivery received at `now` (the read's time) and checks its sequence.
    private func deliver(_ stamp: (timestamp: UInt64, sequence: UInt64), recovered: Bool, at now: UInt64) {
        let last = lastSequence
        if stamp.sequence <= last {
            counters.duplicates.add(1)
            return
        }
        if stamp.sequence > last + 1 && last > 0 { counters.gaps.add(Int(stamp.sequence - last - 1)) }
        lastSequence = stamp.sequence
        if recovered { counters.recovered.add(1) }
        recorder.recordDelivery(sentAt: stamp.timestamp, now: now, counters: counters)
    }
}

@available(*, unavailable)
extension LonglinkSubscriber: Sendable {}

/// Frames every benchmark connection sends, encoded once.
enum LonglinkFrames {
    /// The `connect` frame (no token: benchmarks run against a development-mode gateway, or pass one later).
    static let connect = BenchConnection.encode(
        .connect(ConnectRequest(token: "", clientName: "longlink-bench", clientVersion: "1"))
    )
}

/// What a Longlink publisher sends next on each route: the fan-out's endless reassignment loop or the orders
/// scenario's full lifecycles. Loop-confined, like the sink that asks it.
protocol PublishPlan: AnyObject {
    /// Appends the framed publish of the next change on `route` to `frames`: request `requestID`, the payload
    /// stamped with `stamp` and `payloadSize` bytes long, `idempotencyKey` when not empty.
    func appendPublish(
        route: Int,
        requestID: UInt32,
        stamp: (timestamp: UInt64, sequence: UInt64),
        payloadSize: Int,
        idempotencyKey: String,
        to frames: inout [UInt8]
    )
}

extension PublishPlan {
    /// Appends `change` as a publish encoded by the codec (for plans whose changes carry more than a state and the
    /// payload; the fan-out's plan writes its frames itself).
    func appendEncoded(_ change: OrderChange, requestID: UInt32, idempotencyKey: String, to frames: inout [UInt8]) {
        frames += BenchConnection.encode(
            .publish(
                PublishRequest(
                    requestID: requestID,
                    orderID: change.orderID.rawValue,
                    line: change.line.name,
                    targetState: change.targetState.name,
                    fields: change.fields,
                    idempotencyKey: idempotencyKey
                )
            )
        )
    }
}

/// Per route, the order is created once, then moves `dispatching → driver_assigned → dispatching …` (a driver
/// taking the order and dropping out: legal forever). Its frames are written by `PublishEncoder` from bytes prepared
/// once per route and per state.
final class ReassignmentPlan: PublishPlan {
    /// Changes published per route so far (0 = the order does not exist yet), in memory the plan owns: an update
    /// is not an exclusive access to a class property checked at run time.
    private let steps: UnsafeMutableBufferPointer<Int>
    /// Every route's order id, back to back; route r's is `orderIDs[orderIDStarts[r]..<orderIDStarts[r + 1]]`.
    private let orderIDs: [UInt8]
    private let orderIDStarts: [Int]
    private let line = Array(BusinessLine.taxi.name.utf8)
    private let driverID = Array("driver-1".utf8)
    /// The encoded target-state fields of `created`, `dispatching` and `driver_assigned`.
    private let stateFields: [[UInt8]]

    init(names: RouteNames, routes: Int) {
        self.steps = .allocate(capacity: routes)
        steps.initialize(repeating: 0)
        var ids: [UInt8] = []
        var starts = [0]
        starts.reserveCapacity(routes + 1)
        for route in 0..<routes {
            ids += names.orderID(route).utf8
            starts.append(ids.count)
        }
        self.orderIDs = ids
        self.orderIDStarts = starts
        self.stateFields = [BuiltInLines.created, BuiltInLines.dispatching, BuiltInLines.driverAssigned].map(PublishEncoder.stateField)
    }

    deinit { steps.deallocate() }

    /// The target state of the next change on a route after `step` changes.
    static func state(afterSteps step: Int) -> OrderState {
        [BuiltInLines.created, BuiltInLines.dispatching, BuiltInLines.driverAssigned][stateIndex(afterSteps: step)]
    }

    /// `state(afterSteps:)` as an index into created, dispatching, driver_assigned.
    private static func stateIndex(afterSteps step: Int) -> Int {
        step == 0 ? 0 : (step % 2 == 1 ? 1 : 2)
    }

    func appendPublish(
        route: Int,
        requestID: UInt32,
        stamp: (timestamp: UInt64, sequence: UInt64),
        payloadSize: Int,
        idempotencyKey: String,
        to frames: inout [UInt8]
    ) {
        let state = Self.stateIndex(afterSteps: steps[route])
        steps[route] += 1
        let key = idempotencyKey.isEmpty ? [] : Array(idempotencyKey.utf8)
        let start = orderIDStarts[route]
        let end = orderIDStarts[route + 1]
        orderIDs.withUnsafeBytes { ids in
            line.withUnsafeBytes { line in
                driverID.withUnsafeBytes { driver in
                    PublishEncoder.append(
                        requestID: requestID,
                        orderID: UnsafeRawBufferPointer(rebasing: ids[start..<end]),
                        line: line,
                        stateField: stateFields[state],
                        driverID: state == 2 ? driver : nil,
                        stamp: stamp,
                        payloadSize: payloadSize,
                        idempotencyKey: key,
                        to: &frames
                    )
                }
            }
        }
    }
}

/// The publishes in flight on one connection, by request id: a ring of slots indexed by the id's low bits. Ids are
/// handed out in sequence, so a window of N publishes in flight fits N slots without a collision; a collision (more
/// in flight than slots) doubles the ring. A dictionary hashed every id twice per publish; the slots live in memory
/// the ring owns, so an update is not an exclusive access to a class property checked at run time. Loop-confined.
final class PendingPublishes {
    /// One publish waiting for its answer.
    struct Entry {
        let requestID: UInt32
        let route: Int
        /// Send order (request ids wrap).
        let ordinal: UInt64
        /// The encoded frame, kept for a resend (only with `survivesRestarts`).
        let frame: [UInt8]?
    }

    private var slots: UnsafeMutableBufferPointer<Entry?>
    /// Publishes in flight.
    private(set) var count = 0

    init(capacity: Int = 256) {
        slots = .allocate(capacity: capacity)
        slots.initialize(repeating: nil)
    }

    deinit {
        _ = slots.deinitialize()
        slots.deallocate()
    }

    private func slot(_ requestID: UInt32) -> Int { Int(requestID) & (slots.count - 1) }

    /// Adds a publish (its id must not be in flight already).
    func insert(_ entry: Entry) {
        while slots[slot(entry.requestID)] != nil { grow() }
        slots[slot(entry.requestID)] = entry
        count += 1
    }

    /// Takes out the publish with `requestID`; nil when none is in flight.
    func remove(_ requestID: UInt32) -> Entry? {
        let index = slot(requestID)
        guard let entry = slots[index], entry.requestID == requestID else { return nil }
        slots[index] = nil
        count -= 1
        return entry
    }

    /// Every publish in flight, oldest first.
    var entries: [Entry] { slots.compactMap { $0 }.sorted { $0.ordinal < $1.ordinal } }

    /// Forgets every publish.
    func removeAll() {
        for index in slots.indices { slots[index] = nil }
        count = 0
    }

    private func grow() {
        let entries = slots.compactMap { $0 }
        var size = slots.count * 2
        while Set(entries.map { Int($0.requestID) & (size - 1) }).count < entries.count { size *= 2 }
        _ = slots.deinitialize()
        slots.deallocate()
        slots = .allocate(capacity: size)
        slots.initialize(repeating: nil)
        for entry in entries { slots[slot(entry.requestID)] = entry }
    }
}

/// Publishes benchmark changes to Longlink over one connection, as its `PublishPlan` says, each change carrying
/// the stamped payload. Request ids map answers back to routes. Loop-confined.
///
/// With `survivesRestarts` (storm --restart) every publish carries an idempotency key (`bench-<request id>`) and
/// keeps its encoded frame until answered; when the server goes away the sink reconnects and resends the
/// unanswered publishes in their original order, so the store applies each at most once (a publish stored
/// before the crash answers `deduplicated`). Without it a lost connection refuses what was in flight.
final class LonglinkPublishSink: PublishSink, BenchConnectionDelegate {
    private let plan: any PublishPlan
    private let endpoint: BenchEndpoint
    private unowned let context: LoopContext
    private let survivesRestarts: Bool
    private var connection: BenchConnection?
    private var everConnected = false
    private var reconnectDelayMillis = 0
    /// The publishes in flight.
    private let pending = PendingPublishes()
    private var nextRequest: UInt32 = 1
    private var nextOrdinal: UInt64 = 0
    /// The publisher it answers (held until `close()`: no weak reference on the delivery path).
    var publisher: PacedPublisher?
    /// Where failures, retries and deduplicated answers are counted (the runner swaps in the measured run's).
    var counters: BenchCounters
    /// Called once, when the connection is first up.
    var onReady: (() -> Void)?

    init(plan: any PublishPlan, endpoint: BenchEndpoint, context: LoopContext, counters: BenchCounters, survivesRestarts: Bool = false) {
        self.plan = plan
        self.endpoint = endpoint
        self.context = context
        self.counters = counters
        self.survivesRestarts = survivesRestarts
        connect()
    }

    private func connect() {
        do {
            connection = try BenchConnection(
                index: -1,
                endpoint: endpoint,
                connectFrame: LonglinkFrames.connect,
                context: context,
                delegate: self
            )
        } catch {
            if survivesRestarts && everConnected { return scheduleReconnect() }
            counters.fail("publisher " + BenchConnection.reason(error, during: "connect"))
        }
    }

    /// Same back-off as the subscribers: 20 ms doubling to 250 ms.
    private func scheduleReconnect() {
        counters.reconnects.add(1)
        reconnectDelayMillis = reconnectDelayMillis == 0 ? 20 : min(2 * reconnectDelayMillis, 250)
        context.schedule(after: .milliseconds(Int64(reconnectDelayMillis))) { [weak self] in
            guard let self, self.connection == nil, self.publisher != nil || self.onReady != nil else { return }
            self.connect()
        }
    }

    var isReady: Bool { connection?.isOpen ?? false }

    /// Moves the connection's reads (the publish results) to the loop's io_uring; returns whether it did.
    @discardableResult
    func readThroughRing(_ reader: BenchUringReader) -> Bool { connection?.readThroughRing(reader) ?? false }

    func close() {
        let closing = connection
        connection = nil
        publisher = nil
        onReady = nil
        closing?.close()
    }

    func publish(route: Int, stamp: (timestamp: UInt64, sequence: UInt64), payloadSize: Int) {
        let request = nextRequest
        nextRequest = nextRequest == UInt32.max ? 1 : nextRequest + 1
        var kept: [UInt8]?
        if survivesRestarts {
            // The frame is kept for a resend, and encoded even while there is no connection to send it on.
            var frame: [UInt8] = []
            plan.appendPublish(route: route, requestID: request, stamp: stamp, payloadSize: payloadSize, idempotencyKey: "bench-\(request)", to: &frame)
            kept = frame
            connection?.send(bytes: frame)
        } else {
            let plan = self.plan
            connection?.send { frames in
                plan.appendPublish(route: route, requestID: request, stamp: stamp, payloadSize: payloadSize, idempotencyKey: "", to: &frames)
            }
        }
        pending.insert(PendingPublishes.Entry(requestID: request, route: route, ordinal: nextOrdinal, frame: kept))
        nextOrdinal += 1
    }

    func connectionDidConnect(_ connection: BenchConnection) {
        reconnectDelayMillis = 0
        if everConnected {
            // Back after a restart: resend what was never answered, oldest first.
            let unanswered = pending.entries
            for entry in unanswered {
                guard let frame = entry.frame else { continue }
                connection.send(bytes: frame)
            }
            counters.retried.add(unanswered.count)
            publisher?.sinkBecameReady()
            return
        }
        everConnected = true
        let ready = onReady
        onReady = nil
        ready?()
    }

    func connection(_ connection: BenchConnection, didReceivePublishResult result: PublishResultView) {
        guard let entry = pending.remove(result.requestID) else { return }
        if result.deduplicated { counters.deduplicated.add(1) }
        publisher?.acknowledged(route: entry.route, accepted: true)
    }

    func connection(_ connection: BenchConnection, didReceive frame: ServerFrame) {
        guard case .publishResult(let result) = frame, let entry = pending.remove(result.requestID)
        else { return }
        switch result.outcome {
        case .refused(let error):
            counters.fail("publish refused: \(error.code)")
            publisher?.acknowledged(route: entry.route, accepted: false)
        case .accepted(_, _, let deduplicated):
            if deduplicated { counters.deduplicated.add(1) }
            publisher?.acknowledged(route: entry.route, accepted: true)
        }
    }

    func connectionDidClose(_ connection: BenchConnection, error: String?) {
        guard connection === self.connection else { return }
        self.connection = nil
        guard let error else { return }
        if survivesRestarts && everConnected { return scheduleReconnect() }
        counters.fail("publisher: \(error)")
        let lost = pending.entries
        pending.removeAll()
        for entry in lost { publisher?.acknowledged(route: entry.route, accepted: false) }
    }
}

@available(*, unavailable)
extension LonglinkPublishSink: Sendable {}
