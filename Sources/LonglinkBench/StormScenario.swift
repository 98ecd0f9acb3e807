import LonglinkCore
import LonglinkLoop
import Synchronization

/// `longlink bench storm`: S subscribers over T routes while a publisher runs at `--rate` (1,000/s when 0);
/// after a third of `--duration` every subscriber's connection is cut at once (a TCP reset, as a network drop
/// looks to the server) and each reconnects at once and resumes from the last position it saw. Reports the time
/// until every client is subscribed again, the records recovered through resume, records lost (must be 0) and
/// duplicates the server sent (must be 0).
///
/// With `--restart` the server is cut instead: bench's own gateway, on a SQLite store in a temporary directory,
/// is killed with SIGKILL (a crash: no drain, no goodbye) and started again on the same ports and store file.
/// Every subscriber notices the loss and reconnects with back-off and resume; the publisher reconnects too and
/// resends its unanswered publishes with their idempotency keys, so the store applies each at most once. Records
/// lost count only what the publisher had acknowledged: an acknowledged record that no subscriber gets after the
/// crash is a durability failure.
enum StormScenario {
    /// The storm's progress, shared by the coordinating thread and the loops.
    final class State: Sendable {
        let cutAt = Atomic<UInt64>(0)
        /// --restart: when the new gateway process listened.
        let restartedAt = Atomic<UInt64>(0)
        let recoveredAt = Atomic<UInt64>(0)
        let restartError = Mutex<String?>(nil)
    }

    static func run(_ context: ScenarioContext, into report: inout BenchReport) throws {
        let parameters = context.parameters
        let restarter = context.servers.restarter
        if parameters.restart && restarter == nil {
            throw BenchError("storm --restart needs the gateway bench starts itself; bench cannot restart a server it did not start")
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
        runner.survivesRestarts = restarter != nil
        runner.duringPublishing = { elapsed, counters in
            if state.cutAt.load(ordering: .relaxed) == 0 && elapsed >= cutAfter {
                state.cutAt.store(MonotonicClock.nanoseconds(), ordering: .relaxed)
                if let restarter {
                    restart(restarter, state: state, control: control)
                } else {
                    cut(loops, subscribers: subscribers, control: control)
                }
            }
            if state.cutAt.load(ordering: .relaxed) != 0 && state.recoveredAt.load(ordering: .relaxed) == 0
                && counters.resubscribed.value >= counters.subscribed.value
            {
                state.recoveredAt.store(MonotonicClock.nanoseconds(), ordering: .relaxed)
            }
        }
        // A slow recovery (thousands of TLS handshakes) may outlast publishing: the drain waits for it too.
        runner.drainUntil = { _ in state.cutAt.load(ordering: .relaxed) == 0 || state.recoveredAt.load(ordering: .relaxed) != 0 }
        runner.extraFigures = { counters in
            let cut = state.cutAt.load(ordering: .relaxed)
            let recovered = state.recoveredAt.load(ordering: .relaxed)
            var figures = [
                Figure("cut_connections", cut == 0 ? 0 : Double(counters.subscribed.value)),
                Figure("resubscribed", Double(counters.resubscribed.value)),
                Figure("recovery_seconds", recovered == 0 ? -1 : seconds(from: cut, to: recovered), "s"),
                Figure("records_recovered_by_resume", Double(counters.recovered.value)),
                Figure("resumes_not_recovered", Double(counters.notRecovered.value)),
            ]
            if counters.tlsFull.value + counters.tlsResumed.value > 0 {
                // Over the whole run: the first connections are full handshakes, reconnects resume.
                figures += [
                    Figure("tls_full_handshakes", Double(counters.tlsFull.value)),
                    Figure("tls_resumed_handshakes", Double(counters.tlsResumed.value)),
                ]
            }
            if restarter != nil {
                let restarted = state.restartedAt.load(ordering: .relaxed)
                figures += [
                    Figure("gateway_restart_seconds", restarted == 0 ? -1 : seconds(from: cut, to: restarted), "s"),
                    Figure("reconnect_attempts", Double(counters.reconnects.value)),
                    Figure("publishes_resent", Double(counters.retried.value)),
                    Figure("publishes_deduplicated", Double(counters.deduplicated.value)),
                ]
            }
            return figures
        }
        let cutText = restarter == nil ? "cut at \(format(cutAfter)) s" : "gateway killed (SIGKILL) and restarted at \(format(cutAfter)) s"
        let label = "storm S=\(workload.subscribers) T=\(workload.routes) R=\(format(workload.rate)) P=\(workload.payload), \(cutText)"
        let gateway = context.servers.gateway
        // After a restart the process is another one: no server CPU/RSS figures across it.
        var run = runner.run(.longlink(context.endpoint), workload: workload, label: label, serverPID: restarter == nil ? gateway.pid : nil)
        if let error = state.restartError.withLock({ $0 }) {
            run.failures["gateway restart: \(error)", default: 0] += 1
        }
        if state.recoveredAt.load(ordering: .relaxed) == 0 {
            run.failures["not every client recovered before the run ended", default: 0] += 1
        }
        if restarter != nil {
            report.notes.append(
                "storm --restart: the gateway (SQLite store, synchronous=NORMAL) was killed with SIGKILL, a crash without "
                    + "drain or flush, and restarted on the same port and store file; lost counts acknowledged records only "
                    + "(publishes unanswered at the kill were resent with their idempotency keys)"
            )
        }
        report.runs.append(run)
    }

    /// Cuts every subscriber's connection with a reset and reconnects it at once (resuming).
    private static func cut(_ loops: BenchLoops, subscribers: Int, control: BenchControl) {
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

    /// Kills the gateway and starts it again (blocking the coordinating thread until it listens); the clients
    /// reconnect by themselves meanwhile.
    private static func restart(_ restarter: BenchGatewayRestarter, state: State, control: BenchControl) {
        control.progress("storm: killing the gateway (SIGKILL) and restarting it on the same port and store")
        restarter.kill()
        do {
            let server = try restarter.restart()
            state.restartedAt.store(MonotonicClock.nanoseconds(), ordering: .relaxed)
            control.progress("storm: gateway listening again (pid \(server.pid.map(String.init) ?? "?"))")
        } catch {
            state.restartError.withLock { $0 = "\(error)" }
        }
    }
}
