import Glibc
import LonglinkCore
import LonglinkLoop
import Synchronization

/// `bench line`: one line-wide subscriber (`subscribe order://taxi/*`) while a publisher changes `--routes` taxi
/// orders at `--rate` changes per second (default 5,000) for `--duration`. Reports the subscriber's own
/// publish→deliver latency (send time in each payload to the push's arrival), deliveries against accepted changes,
/// and pushes that arrived out of commit order for their order.
enum LineScenario {
    static func run(_ context: ScenarioContext, into report: inout BenchReport) throws {
        let parameters = context.parameters
        let rate = parameters.rate > 0 ? parameters.rate : 5_000
        let orders = max(1, parameters.routes)
        let state = LineRunState()
        let endpoint = context.endpoint
        let loop = context.loops.loop(0)
        let tag = String(UInt32.random(in: 0...UInt32.max), radix: 36)
        loop.execute { loopContext in
            let runner = LineRunner(
                endpoint: endpoint, context: loopContext, state: state, rate: rate, orders: orders, tag: tag,
                payloadSize: parameters.payload
            )
            loopContext.attach(runner)
            runner.start()
        }
        let ready = context.control.wait(timeout: parameters.timeoutLimit) { state.subscribed.load(ordering: .acquiring) }
        guard ready else { throw BenchError("the line-wide subscriber was not subscribed within \(parameters.timeoutLimit): \(state.failure)") }
        let started = ContinuousClock.now
        loop.execute { $0.attachment(LineRunner.self)?.startPublishing() }
        context.control.wait(timeout: parameters.durationLimit) { false }
        loop.execute { $0.attachment(LineRunner.self)?.stopPublishing() }
        let publishedFor = ContinuousClock.now - started
        // Let the last deliveries arrive (bounded).
        context.control.wait(timeout: .seconds(3), honourInterrupt: false) {
            state.delivered.load(ordering: .relaxed) >= state.accepted.load(ordering: .relaxed)
        }
        let histogram = context.loops.collect { $0.attachment(LineRunner.self)?.finish() ?? LatencyHistogram() }.first ?? LatencyHistogram()
        loop.execute { $0.detach(LineRunner.self) }
        let seconds = Double(publishedFor.components.seconds) + Double(publishedFor.components.attoseconds) / 1e18
        let accepted = state.accepted.load(ordering: .relaxed)
        let delivered = state.delivered.load(ordering: .relaxed)
        var run = BenchRun(system: "longlink", label: "line-wide subscriber (order://taxi/*) at \(Int(rate)) changes/s over \(orders) orders")
        run.figures = [
            Figure("target_rate", rate, "changes/s"),
            Figure("accepted_rate", Double(accepted) / max(seconds, 0.001), "changes/s"),
            Figure("delivered_rate", Double(delivered) / max(seconds, 0.001), "pushes/s"),
            Figure("accepted", Double(accepted)),
            Figure("refused", Double(state.refused.load(ordering: .relaxed))),
            Figure("delivered", Double(delivered)),
            Figure("lost", Double(max(0, accepted - delivered))),
            Figure("out_of_order", Double(state.outOfOrder.load(ordering: .relaxed))),
            Figure("p50_ms", Double(histogram.value(atPercentile: 50)) / 1e6, "ms"),
            Figure("p99_ms", Double(histogram.value(atPercentile: 99)) / 1e6, "ms"),
            Figure("max_ms", Double(histogram.value(atPercentile: 100)) / 1e6, "ms"),
        ]
        run.latency = LatencySummary(histogram)
        if let stats = context.servers.gateway.stats { run.figures.append(Figure("server_rss", Double(stats.residentBytes), "bytes")) }
        report.runs.append(run)
    }
}

/// What the runner tells the coordinating thread.
final class LineRunState: Sendable {
    let subscribed = Atomic<Bool>(false)
    let accepted = Atomic<Int>(0)
    let refused = Atomic<Int>(0)
    let delivered = Atomic<Int>(0)
    let outOfOrder = Atomic<Int>(0)
    private let failureText = Mutex("")
    var failure: String { failureText.withLock { $0 } }
    func fail(_ text: String) { failureText.withLock { $0 = text } }
}

/// The subscriber and the publisher of `bench line`, on one loop.
final class LineRunner: BenchConnectionDelegate {
    private let endpoint: BenchEndpoint
    private let context: LoopContext
    private let state: LineRunState
    private let rate: Double
    private let orders: Int
    private let tag: String
    private let payloadSize: Int
    private var subscriber: BenchConnection?
    private var publisher: BenchConnection?
    private var histogram = LatencyHistogram()
    private var lastOffset: [String: UInt64] = [:]
    /// Changes already made per order (the next state follows the taxi machine: created, dispatching, then
    /// driver_assigned ⇄ dispatching).
    private var steps: [Int]
    private var sequence: UInt64 = 0
    private var publishing = false
    private var owed = 0.0
    private var lastTick: UInt64 = 0
    private var requestID: UInt32 = 1
    private var inFlight = 0

    init(endpoint: BenchEndpoint, context: LoopContext, state: LineRunState, rate: Double, orders: Int, tag: String, payloadSize: Int) {
        self.endpoint = endpoint
        self.context = context
        self.state = state
        self.rate = rate
        self.orders = orders
        self.tag = tag
        self.payloadSize = max(BenchPayload.minimumSize, payloadSize)
        self.steps = Array(repeating: 0, count: orders)
    }

    func start() {
        let connect = BenchConnection.encode(.connect(ConnectRequest(token: "bench", clientName: "bench-line")))
        do {
            subscriber = try BenchConnection(index: 0, endpoint: endpoint, connectFrame: connect, context: context, delegate: self)
            publisher = try BenchConnection(index: 1, endpoint: endpoint, connectFrame: connect, context: context, delegate: self)
        } catch {
            state.fail("connect: \(error)")
        }
    }

    func startPublishing() {
        publishing = true
        lastTick = MonotonicClock.nanoseconds()
        tick()
    }

    func stopPublishing() { publishing = false }

    func finish() -> LatencyHistogram {
        subscriber?.close()
        publisher?.close()
        return histogram
    }

    /// Every millisecond: the publishes owed at `rate` since the last tick (at most 4,096 in flight).
    private func tick() {
        guard publishing, let publisher, publisher.isOpen else { return }
        let now = MonotonicClock.nanoseconds()
        owed += Double(now &- lastTick) / 1e9 * rate
        lastTick = now
        while owed >= 1 && inFlight < 4_096 {
            owed -= 1
            publish(on: publisher, now: now)
        }
        if owed > rate { owed = rate }  // behind by more than a second: do not burst to catch up
        context.schedule(after: .milliseconds(1)) { [weak self] in self?.tick() }
    }

    private func publish(on publisher: BenchConnection, now: UInt64) {
        let order = Int(sequence % UInt64(orders))
        let step = steps[order]
        steps[order] += 1
        let target = step == 0 ? "created" : step % 2 == 1 ? "dispatching" : "driver_assigned"
        let payload = BenchPayload.make(size: payloadSize, timestamp: now, sequence: sequence)
        sequence += 1
        var fields = OrderFields(payload: payload)
        if target == "driver_assigned" { fields.driverID = "d-\(order)" }
        publisher.send(
            .publish(PublishRequest(requestID: requestID, orderID: "l\(tag)-\(order)", line: "taxi", targetState: target, fields: fields))
        )
        requestID = requestID == .max ? 1 : requestID + 1
        inFlight += 1
    }

    // MARK: BenchConnectionDelegate

    func connectionDidConnect(_ connection: BenchConnection) {
        if connection === subscriber {
            connection.send(.subscribe(SubscribeRequest(requestID: 1, route: "order://taxi/*")))
        }
    }

    func connection(_ connection: BenchConnection, didReceive frame: ServerFrame) {
        switch frame {
        case .subscribed:
            state.subscribed.store(true, ordering: .releasing)
        case .publishResult(let result):
            inFlight -= 1
            if case .accepted = result.outcome { state.accepted.add(1, ordering: .relaxed) } else { state.refused.add(1, ordering: .relaxed) }
        case .error(let error):
            state.fail("\(error)")
        default:
            break
        }
    }

    /// An accepted publish (read in place by the connection; a refusal arrives as a decoded `publishResult`).
    func connection(_ connection: BenchConnection, didReceivePublishResult result: PublishResultView) {
        inFlight -= 1
        state.accepted.add(1, ordering: .relaxed)
    }

    func connection(_ connection: BenchConnection, didReceivePush push: PushView) {
        let now = MonotonicClock.nanoseconds()
        if let (sentAt, _) = BenchPayload.read(push.payload) { histogram.record(now &- sentAt) }
        let route = String(decoding: push.route, as: UTF8.self)
        if let last = lastOffset[route], push.offset <= last { state.outOfOrder.add(1, ordering: .relaxed) }
        lastOffset[route] = push.offset
        state.delivered.add(1, ordering: .relaxed)
    }

    func connectionDidClose(_ connection: BenchConnection, error: String?) {
        if let error { state.fail(error) }
    }
}

@available(*, unavailable)
extension LineRunner: Sendable {}
