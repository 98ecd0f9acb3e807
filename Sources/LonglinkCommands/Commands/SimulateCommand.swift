import Foundation
import LonglinkClient
import LonglinkCore
import Synchronization

/// `longlink simulate --orders N --rate R`: drives realistic, seeded ride-hailing traffic through a running
/// gateway (orders walking their lifecycles with cancellations, timeouts and reassignments), so a new user sees
/// the system alive. Every change goes through the real publish path and must be accepted.
public enum SimulateCommand {
    /// The command.
    public static let command = Command(
        name: "simulate",
        summary: "publish realistic ride-hailing traffic (seeded lifecycles) through the gateway",
        usage: "[--orders N] [--rate R] [--seed S] [--lines taxi,express,...]",
        maximumPositionals: 0,
        options: ClientOptions.specs + [
            OptionSpec("orders", default: "100", valueName: "N", help: "orders to run through their lifecycles"),
            OptionSpec("rate", default: "50", valueName: "R", help: "changes per second (0 = as fast as acknowledged)"),
            OptionSpec("seed", default: "1", valueName: "S", help: "random seed (same seed, same traffic)"),
            OptionSpec("lines", default: "taxi,express,premium,carpool", valueName: "LIST", help: "business lines"),
            OptionSpec("concurrency", default: "64", valueName: "N", help: "orders in flight at once"),
            OptionSpec("window", default: "32", valueName: "N", help: "publishes awaiting their result at once"),
            OptionSpec("prefix", default: "sim", valueName: "TEXT", help: "order id prefix", configurable: false),
        ]
    ) { options, context in
        let orders = try options.int("orders") ?? 100
        let rate = try options.double("rate") ?? 50
        guard let seed = UInt64(try options.required("seed")) else { throw CommandLineError("--seed must be a whole number") }
        var lines: [BusinessLine] = []
        for name in try options.required("lines").split(separator: ",") {
            guard let line = BusinessLine(String(name)) else { throw CommandLineError("--lines: '\(name)' is not a line name") }
            lines.append(line)
        }
        let window = max(1, try options.int("window") ?? 32)
        var simulator = RideSimulator(
            orders: orders,
            lines: lines,
            seed: seed,
            concurrency: try options.int("concurrency") ?? 64,
            idPrefix: try options.required("prefix")
        )
        let client = try ClientOptions.makeClient(options, name: "simulate")
        defer { client.close() }
        try await ClientOptions.connect(client, options)
        let tally = SimulationTally()
        let started = ContinuousClock.now
        let interval: Duration? = rate > 0 ? .nanoseconds(Int64(1e9 / rate)) : nil
        var sent = 0
        var perOrder: [OrderID: Int] = [:]
        await withTaskGroup(of: Void.self) { group in
            var inFlight = 0
            while let change = simulator.next() {
                // Changes of one order must reach the Store in order: wait for its previous one first.
                if perOrder[change.orderID, default: 0] > 0 || inFlight >= window {
                    await group.next()
                    inFlight -= 1
                    perOrder = [:]
                    while inFlight > 0 {
                        await group.next()
                        inFlight -= 1
                    }
                }
                if let interval {
                    let due = started + interval * sent
                    if due > ContinuousClock.now { try? await Task.sleep(until: due) }
                }
                perOrder[change.orderID, default: 0] += 1
                inFlight += 1
                sent += 1
                group.addTask {
                    do throws(ClientError) {
                        _ = try await client.publish(change)
                        tally.count(\.accepted)
                    } catch .refused(let error) {
                        tally.count(\.refused)
                        context.io.err("refused \(change.route) → \(change.targetState): \(error)")
                    } catch {
                        tally.count(\.failed)
                    }
                }
                if sent % 100 == 0 && context.io.stdoutIsTerminal {
                    context.io.outRaw("\r\(sent) changes, \(simulator.finished)/\(orders) orders finished   ")
                }
            }
            await group.waitForAll()
        }
        let seconds = Double((ContinuousClock.now - started).components.seconds)
            + Double((ContinuousClock.now - started).components.attoseconds) / 1e18
        let result = tally.totals
        if context.io.stdoutIsTerminal { context.io.outRaw("\n") }
        context.io.out(
            "simulated \(orders) orders: \(result.accepted) changes accepted, \(result.refused) refused, \(result.failed) failed "
                + "in \(String(format: "%.2f", seconds)) s (\(Int(Double(result.accepted) / max(seconds, 0.001))) changes/s)"
        )
        return result.refused == 0 && result.failed == 0 ? 0 : 1
    }
}

/// Publish outcomes counted across tasks.
final class SimulationTally: Sendable {
    struct Totals: Sendable {
        var accepted = 0
        var refused = 0
        var failed = 0
    }

    private let totals_ = Mutex(Totals())

    func count(_ field: any WritableKeyPath<Totals, Int> & Sendable) { totals_.withLock { $0[keyPath: field] += 1 } }
    var totals: Totals { totals_.withLock { $0 } }
}
