import Glibc
import LonglinkCore
import LonglinkLoop

/// One benchmark subscriber on Longlink: connects, subscribes to its route, and checks every push's sequence
/// and latency. After a cut it can reconnect and resume from the last position it saw (storm). Loop-confined.
final class LonglinkSubscriber: BenchConnectionDelegate, BenchSubscriber {
    let index: Int
    /// The route's index in the workload.
    private(set) var route: Int
    private var routeText: String
    private var routeBytes: [UInt8]
    private let address: SocketAddress
    private unowned let context: LoopContext
    private let counters: BenchCounters
    private let recorder: LoopRecorder
    private var connection: BenchConnection?
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
        address: SocketAddress,
        context: LoopContext,
        counters: BenchCounters
    ) {
        self.index = index
        self.route = route
        self.routeText = routeText
        self.routeBytes = Array(routeText.utf8)
        self.address = address
        self.context = context
        self.counters = counters
        self.recorder = context.attachment(LoopRecorder.self)!
    }

    /// Opens the connection; failures are counted, not thrown.
    func start() {
        do {
            connection = try BenchConnection(
                index: index,
                address: address,
                connectFrame: LonglinkFrames.connect,
                context: context,
                delegate: self
            )
        } catch {
            counters.fail("connect: \(BenchConnection.reason(error))")
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
        deliver(stamp, recovered: false)
        onPush?(self, stamp.sequence)
    }

    func connectionDidClose(_ connection: BenchConnection, error: String?) {
        guard connection === self.connection else { return }  // an old, cut connection
        self.connection = nil
        isSubscribed = false
        if closing { return }
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
        deliver(stamp, recovered: recovered)
    }

    private func deliver(_ stamp: (timestamp: UInt64, sequence: UInt64), recovered: Bool) {
        if stamp.sequence <= lastSequence {
            counters.duplicates.add(1)
            return
        }
        if stamp.sequence > lastSequence + 1 && lastSequence > 0 { counters.gaps.add(Int(stamp.sequence - lastSequence - 1)) }
        lastSequence = stamp.sequence
        counters.deliveries.add(1)
        if recovered { counters.recovered.add(1) }
        recorder.recordDelivery(sentAt: stamp.timestamp, now: MonotonicClock.nanoseconds())
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
    /// The next change on route `route`, carrying `payload`.
    func nextChange(route: Int, payload: [UInt8]) -> OrderChange
}

/// Per route, the order is created once, then moves `dispatching → driver_assigned → dispatching …` (a driver
/// taking the order and dropping out: legal forever).
final class ReassignmentPlan: PublishPlan {
    private let names: RouteNames
    /// Changes published per route so far (0 = the order does not exist yet).
    private var steps: [Int]

    init(names: RouteNames, routes: Int) {
        self.names = names
        self.steps = Array(repeating: 0, count: routes)
    }

    /// The target state of the next change on a route after `step` changes.
    static func state(afterSteps step: Int) -> OrderState {
        if step == 0 { return BuiltInLines.created }
        return step % 2 == 1 ? BuiltInLines.dispatching : BuiltInLines.driverAssigned
    }

    func nextChange(route: Int, payload: [UInt8]) -> OrderChange {
        let state = Self.state(afterSteps: steps[route])
        steps[route] += 1
        var fields = OrderFields(payload: payload)
        if state == BuiltInLines.driverAssigned { fields.driverID = "driver-1" }
        return OrderChange(orderID: OrderID(names.orderID(route))!, line: .taxi, targetState: state, fields: fields)
    }
}

/// Publishes benchmark changes to Longlink over one connection, as its `PublishPlan` says, each change carrying
/// the stamped payload. Request ids map answers back to routes. Loop-confined.
final class LonglinkPublishSink: PublishSink, BenchConnectionDelegate {
    private let plan: any PublishPlan
    private var connection: BenchConnection?
    /// The route of each request in flight, by request id.
    private var routesByRequest: [UInt32: Int] = [:]
    private var nextRequest: UInt32 = 1
    weak var publisher: PacedPublisher?
    private let counters: BenchCounters
    /// Called when the connection is up.
    var onReady: (() -> Void)?

    init(plan: any PublishPlan, address: SocketAddress, context: LoopContext, counters: BenchCounters) {
        self.plan = plan
        self.counters = counters
        do {
            connection = try BenchConnection(
                index: -1,
                address: address,
                connectFrame: LonglinkFrames.connect,
                context: context,
                delegate: self
            )
        } catch {
            counters.fail("publisher connect: \(BenchConnection.reason(error))")
        }
    }

    var isReady: Bool { connection?.isOpen ?? false }

    func close() {
        connection?.close()
        connection = nil
    }

    func publish(route: Int, sequence: UInt64, payload: [UInt8]) {
        let change = plan.nextChange(route: route, payload: payload)
        let request = nextRequest
        nextRequest = nextRequest == UInt32.max ? 1 : nextRequest + 1
        routesByRequest[request] = route
        connection?.send(
            .publish(
                PublishRequest(
                    requestID: request,
                    orderID: change.orderID.rawValue,
                    line: change.line.name,
                    targetState: change.targetState.name,
                    fields: change.fields
                )
            )
        )
    }

    func connectionDidConnect(_ connection: BenchConnection) { onReady?() }

    func connection(_ connection: BenchConnection, didReceive frame: ServerFrame) {
        guard case .publishResult(let result) = frame, let route = routesByRequest.removeValue(forKey: result.requestID)
        else { return }
        if case .refused(let error) = result.outcome {
            counters.fail("publish refused: \(error.code)")
            publisher?.acknowledged(route: route, accepted: false)
        } else {
            publisher?.acknowledged(route: route, accepted: true)
        }
    }

    func connectionDidClose(_ connection: BenchConnection, error: String?) {
        guard let error else { return }
        counters.fail("publisher: \(error)")
        let lost = routesByRequest
        routesByRequest = [:]
        for route in lost.values { publisher?.acknowledged(route: route, accepted: false) }
    }
}

@available(*, unavailable)
extension LonglinkPublishSink: Sendable {}
