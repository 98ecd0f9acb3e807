import LonglinkCore
import LonglinkLoop
import Synchronization

/// `longlink bench storm`: S subscribers over T routes while a publisher runs at `--rate` (1,000/s when 0);
/// after a third of `--duration` every subscriber's connection is cut at once (a TCP reset, as a network drop
/// looks to the server) and each reconnects at once and resumes from the last position it saw. Reports the time
/// until every client is subscribed again, the records recovered through resume, records lost (must be 0) and
/// duplicates the server sent (must be 0).
enum StormScenario {
    /// The storm's progress, shared by the coordinating thread and the loops.
    final class State: Sendable {
        let cutAt = Atomic<UInt64>(0)
        let recoveredAt = Atomic<UInt64>(0)
    }

    static func run(_ context: ScenarioContext, into report: inout BenchReport) throws {
        let parameters = context.parameters
        if parameters.restart {
            throw BenchError("storm --restart is not supported yet: run storm without it (clients are cut instead)")
        }
        var workload = parameters.workload
        if workload.rate == 0 { workload.rate = 1_000 }
        let subscribers = workload.subscribers
        let state = State()
        let loops = context.loops
        let control = context.control
        let cutAfter = parameters.duration / 3
        var runner = FanoutRunner(
            loops: loops,
            control: control,
            duration: parameters.durationLimit,
            timeout: parameters.timeoutLimit
        )
        runner.duringPublishing = { elapsed, counters in
            if state.cutAt.load(ordering: .relaxed) == 0 && elapsed >= cutAfter {
                state.cutAt.store(MonotonicClock.nanoseconds(), ordering: .relaxed)
                control.progress("storm: cutting \(subscribers) connections")
                for loop in loops.loops {
                    loop.execute { context in
                        for case let subscriber as LonglinkSubscriber in context.attachment(SubscriberPool.self)?.members ?? [] {
                            subscriber.cut()
                            subscriber.reconnect()
                        }
                    }
                }
            }
            if state.cutAt.load(ordering: .relaxed) != 0 && state.recoveredAt.load(ordering: .relaxed) == 0
                && counters.resubscribed.value >= counters.subscribed.value
            {
                state.recoveredAt.store(MonotonicClock.nanoseconds(), ordering: .relaxed)
            }
        }
        runner.extraFigures = { counters in
            let cut = state.cutAt.load(ordering: .relaxed)
            let recovered = state.recoveredAt.load(ordering: .relaxed)
            return [
                Figure("cut_connections", cut == 0 ? 0 : Double(counters.subscribed.value)),
                Figure("resubscribed", Double(counters.resubscribed.value)),
                Figure("recovery_seconds", recovered == 0 ? -1 : seconds(from: cut, to: recovered), "s"),
                Figure("records_recovered_by_resume", Double(counters.recovered.value)),
                Figure("resumes_not_recovered", Double(counters.notRecovered.value)),
            ]
        }
        let label = "storm S=\(workload.subscribers) T=\(workload.routes) R=\(format(workload.rate)) P=\(workload.payload), cut at \(format(cutAfter)) s"
        let gateway = context.servers.gateway
        var run = runner.run(.longlink(gateway.address), workload: workload, label: label, serverPID: gateway.pid)
        if state.recoveredAt.load(ordering: .relaxed) == 0 {
            run.failures["not every client recovered before the run ended", default: 0] += 1
        }
        report.runs.append(run)
    }
}

/// Opens and closes connections at a steady rate on every loop while a fan-out runs (churn). Each connection
/// connects, handshakes, subscribes to one of the fan-out's routes and closes after `lifetime`. Loop-confined.
final class ChurnDriver: BenchConnectionDelegate {
    private unowned let context: LoopContext
    private let address: SocketAddress
    private let perTick: Double
    private let lifetime: Duration
    private let counters: BenchCounters
    private let routes: [String]
    private var credit = 0.0
    private var timer: TimerID?
    private var open: [ObjectIdentifier: BenchConnection] = [:]
    private var next = 0

    init(context: LoopContext, address: SocketAddress, ratePerLoop: Double, lifetime: Duration, routes: [String], counters: BenchCounters) {
        self.context = context
        self.address = address
        self.perTick = ratePerLoop / 100
        self.lifetime = lifetime
        self.routes = routes
        self.counters = counters
    }

    func start() {
        timer = context.schedule(every: .milliseconds(10)) { [weak self] in self?.tick() }
    }

    func stop() {
        if let timer { context.cancel(timer) }
        timer = nil
        let closing = open.values
        open = [:]
        for connection in closing { connection.close() }
    }

    private func tick() {
        credit += perTick
        while credit >= 1 {
            credit -= 1
            next += 1
            do {
                let connection = try BenchConnection(
                    index: next,
                    address: address,
                    connectFrame: LonglinkFrames.connect,
                    context: context,
                    delegate: self
                )
                open[ObjectIdentifier(connection)] = connection
                counters.published.add(1)  // "opened"
            } catch {
                counters.fail("churn connect: \(BenchConnection.reason(error))")
            }
        }
    }

    func connectionDidConnect(_ connection: BenchConnection) {
        counters.connected.add(1)
        connection.send(.subscribe(SubscribeRequest(requestID: 1, route: routes[connection.index % routes.count])))
        context.schedule(after: lifetime) { [weak self, weak connection] in
            guard let self, let connection, self.open.removeValue(forKey: ObjectIdentifier(connection)) != nil else { return }
            connection.close()
            self.counters.closedOnPurpose.add(1)
        }
    }

    func connection(_ connection: BenchConnection, didReceive frame: ServerFrame) {
        if case .subscribed = frame { counters.subscribed.add(1) }
    }

    func connectionDidClose(_ connection: BenchConnection, error: String?) {
        guard open.removeValue(forKey: ObjectIdentifier(connection)) != nil, let error else { return }
        counters.fail("churn: \(error)")
    }
}

@available(*, unavailable)
extension ChurnDriver: Sendable {}

/// `longlink bench churn`: the same fan-out twice, first quiet, then while `--churn-rate` connections per second
/// open (connect, handshake, subscribe) and close (after one second each); the latency of both, side by side.
enum ChurnScenario {
    static func run(_ context: ScenarioContext, into report: inout BenchReport) throws {
        let parameters = context.parameters
        let workload = parameters.workload
        let gateway = context.servers.gateway
        let loops = context.loops
        let label = "fanout S=\(workload.subscribers) T=\(workload.routes) M=\(workload.messages) R=\(format(workload.rate)) P=\(workload.payload)"
        let quiet = FanoutRunner(loops: loops, control: context.control, duration: parameters.durationLimit, timeout: parameters.timeoutLimit)
        report.runs.append(quiet.run(.longlink(gateway.address), workload: workload, label: label + ", no churn", serverPID: gateway.pid))
        guard !context.control.isInterrupted else { return }

        let churn = BenchCounters()
        let names = (0..<min(workload.routes, 1_000)).map { "order://taxi/churn-\($0)" }
        let ratePerLoop = parameters.churnRate / Double(loops.loops.count)
        let address = gateway.address
        var busy = quiet
        busy.background = (
            start: {
                for loop in loops.loops {
                    loop.execute { context in
                        let driver = ChurnDriver(
                            context: context,
                            address: address,
                            ratePerLoop: ratePerLoop,
                            lifetime: .seconds(1),
                            routes: names,
                            counters: churn
                        )
                        context.attach(driver)
                        driver.start()
                    }
                }
            },
            stop: {
                _ = loops.collect { context in
                    context.attachment(ChurnDriver.self)?.stop()
                    context.detach(ChurnDriver.self)
                }
            }
        )
        busy.extraFigures = { _ in
            [
                Figure("churn_rate", parameters.churnRate, "/s"),
                Figure("churn_opened", Double(churn.published.value)),
                Figure("churn_connected", Double(churn.connected.value)),
                Figure("churn_subscribed", Double(churn.subscribed.value)),
                Figure("churn_closed", Double(churn.closedOnPurpose.value)),
                Figure("churn_failed", Double(churn.failed.value)),
            ]
        }
        var run = busy.run(
            .longlink(gateway.address),
            workload: workload,
            label: label + ", churn \(format(parameters.churnRate))/s",
            serverPID: gateway.pid
        )
        for (reason, count) in churn.failureReasons { run.failures[reason, default: 0] += count }
        if let before = report.runs[0].latency?.p99, let after = run.latency?.p99, before > 0 {
            run.figures.append(Figure("p99_ratio_to_no_churn", Double(after) / Double(before)))
        }
        report.runs.append(run)
    }
}
