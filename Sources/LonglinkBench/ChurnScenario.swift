import LonglinkCore
import LonglinkLoop

/// Opens and closes connections at a steady rate on every loop while a fan-out runs (churn). Each connection
/// connects, handshakes, subscribes to one of the fan-out's routes and closes after `lifetime`. Loop-confined.
final class ChurnDriver: BenchConnectionDelegate {
    private unowned let context: LoopContext
    private let endpoint: BenchEndpoint
    private let perTick: Double
    private let lifetime: Duration
    private let counters: BenchCounters
    private let routes: [String]
    private var credit = 0.0
    private var timer: TimerID?
    private var open: [ObjectIdentifier: BenchConnection] = [:]
    private var next = 0

    init(context: LoopContext, endpoint: BenchEndpoint, ratePerLoop: Double, lifetime: Duration, routes: [String], counters: BenchCounters) {
        self.context = context
        self.endpoint = endpoint
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
                    endpoint: endpoint,
                    connectFrame: LonglinkFrames.connect,
                    context: context,
                    delegate: self
                )
                open[ObjectIdentifier(connection)] = connection
                counters.published.add(1)  // "opened"
            } catch {
                counters.fail("churn " + BenchConnection.reason(error, during: "connect"))
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
        report.runs.append(quiet.run(.longlink(context.endpoint), workload: workload, label: label + ", no churn", serverPID: gateway.pid))
        guard !context.control.isInterrupted else { return }

        let churn = BenchCounters()
        let names = (0..<min(workload.routes, 1_000)).map { "order://taxi/churn-\($0)" }
        let ratePerLoop = parameters.churnRate / Double(loops.loops.count)
        let endpoint = context.endpoint
        var busy = quiet
        busy.background = (
            start: {
                for loop in loops.loops {
                    loop.execute { context in
                        let driver = ChurnDriver(
                            context: context,
                            endpoint: endpoint,
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
            .longlink(context.endpoint),
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
