import Foundation
import LonglinkLoop

/// `longlink bench profile`: user-space instructions and heap allocations per publish→delivery of the gateway and
/// of `redis-server`, counted by callgrind, for the workloads of issue 19 (`ProfileWorkload`).
///
/// For each workload and each server, two runs with a fresh server process under callgrind: S subscribers connect,
/// the same paced publisher sends the smaller and then, in the second run, the larger number of publishes at the
/// workload's steady rate, every delivery is awaited, the subscribers leave, and the server ends cleanly (SIGTERM)
/// so callgrind writes its totals. The figure is the difference of the two runs' totals divided by the difference
/// of their deliveries (instructions: the `totals:` line; allocations: the `calls=` to the C allocator's entry
/// points, `CallgrindCalls`): start-up, connecting and subscribing, the publisher's preparation and shutdown are the same
/// in both runs and cancel out. Instruction counts do not depend on the machine's load (other processes only slow
/// the run down), which is what makes them comparable between changes on a shared machine.
///
/// They still vary between runs of one server: how publishes fall against the server's timers (Redis's `serverCron`
/// runs ten times a second) and whether two arrive in one read changes the count by up to a quarter for Redis (a few
/// percent for the gateway). `--rounds N` repeats both servers' pairs of runs N times, alternating, and takes each
/// figure's median, which is what a target should be checked against.
enum ProfileScenario {
    /// The measurement of one server process.
    struct Measurement {
        var published: Int
        var deliveries: Int
        var lost: Int
        var duplicates: Int
        var publishesPerSecond: Double
        /// Median publish→delivery latency, milliseconds.
        var medianLatencyMillis: Double
        var instructions: UInt64
        /// Calls to the C allocator (`CallgrindCalls.allocators`) in the whole process.
        var allocations: UInt64
        var file: String
        /// The server's niceness while it ran.
        var niceness: Int32?
    }

    static func run(
        _ parameters: BenchParameters,
        control: BenchControl,
        executable: String?,
        into report: inout BenchReport
    ) throws {
        guard let binary = parameters.binary ?? executable ?? BenchServers.selfExecutable else {
            throw BenchError("bench profile needs the longlink release binary: pass --binary .build/release/longlink")
        }
        let directory = parameters.profileDirectory ?? BenchServers.temporaryPath("longlink-profile", "d")
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw BenchError("cannot create the profile directory \(directory): \(error.localizedDescription)")
        }
        let servers = try CallgrindServers(binary: binary, directory: directory)
        let ownNiceness = CallgrindServers.niceness() ?? 0
        CallgrindServers.raiseOwnPriority()
        let loops = try BenchLoops(threads: parameters.threads)
        defer { loops.shutdown() }
        let subscribers = parameters.subscribers
        control.progress("bench profile: callgrind files in \(directory)")

        var countsUsed: [String] = []
        var priorities: Set<Int32> = []
        for kind in parameters.profileWorkloads {
            let workload = ProfileWorkload(kind)
            let counts = (parameters.profileCounts ?? workload.defaultCounts).sorted()
            countsUsed.append("\(kind.rawValue) " + counts.map { BenchRendering.grouped(Double($0)) }.joined(separator: " and "))
            var perDelivery: [String: Double] = [:]
            var allocationsPerDelivery: [String: Double] = [:]
            // Each round measures both servers, Longlink first, so a slow spell of the machine falls on both alike.
            var rounds: [String: [ProfileRound]] = [:]
            for round in 1...parameters.rounds {
                for system in ["longlink", "redis"] {
                    var measurements: [Measurement] = []
                    for count in counts {
                        guard !control.isInterrupted else { break }
                        let of = parameters.rounds > 1 ? ", round \(round) of \(parameters.rounds)" : ""
                        control.progress("bench profile: \(kind.rawValue), \(system), \(count) publishes\(of)")
                        measurements.append(
                            try measure(
                                system, workload: workload, subscribers: subscribers, messages: count, round: round,
                                parameters, servers, loops, control, directory
                            )
                        )
                    }
                    guard measurements.count == 2 else { break }
                    rounds[system, default: []].append(ProfileRound(small: measurements[0], large: measurements[1]))
                    priorities.formUnion(measurements.compactMap(\.niceness))
                    for measurement in measurements where measurement.lost > 0 || measurement.duplicates > 0 {
                        report.notes.append(
                            "\(kind.rawValue) \(system), \(measurement.published) publishes: \(measurement.lost) lost, "
                                + "\(measurement.duplicates) duplicates (the figure is not comparable)"
                        )
                    }
                    // A server that takes longer than the interval between publishes to deliver one batches the next
                    // ones together, which costs fewer instructions per delivery than the steady rate does: the
                    // figure is then low. Under callgrind that happens when the machine does not give the server the
                    // core it needs.
                    let interval = 1000 / workload.rate
                    for measurement in measurements
                    where measurement.publishesPerSecond < 0.9 * workload.rate || measurement.medianLatencyMillis > interval {
                        report.notes.append(
                            "\(kind.rawValue) \(system), \(measurement.published) publishes: \(format(measurement.publishesPerSecond)) "
                                + "publishes/s of \(format(workload.rate)), median publish→delivery \(format(measurement.medianLatencyMillis)) ms "
                                + "(over the \(format(interval)) ms between publishes): the server under callgrind fell behind and batched, "
                                + "so its count per delivery is lower than at a steady rate; run again on a quieter machine"
                        )
                    }
                }
            }
            for system in ["longlink", "redis"] {
                guard let measured = rounds[system], !measured.isEmpty else { continue }
                var run = BenchRun(system: system, label: "profile \(workload.title(subscribers: subscribers))")
                run.figures = figures(measured, workload: workload, subscribers: subscribers)
                run.files = measured.flatMap { [$0.small.file, $0.large.file] }
                if let value = run.figure("instructions_per_delivery") { perDelivery[system] = value }
                if let value = run.figure("allocations_per_delivery") { allocationsPerDelivery[system] = value }
                if measured.count > 1 {
                    report.notes.append(
                        "\(kind.rawValue) \(system): instructions per publish→delivery in each of \(measured.count) rounds: "
                            + measured.compactMap { $0.instructionsPerDelivery.map { BenchRendering.grouped($0) } }
                            .joined(separator: ", ") + " (the figure is their median)"
                    )
                }
                report.runs.append(run)
            }
            if let longlink = perDelivery["longlink"], let redis = perDelivery["redis"], redis > 0 {
                let ratio = longlink / redis
                if let index = report.runs.lastIndex(where: { $0.system == "longlink" }) {
                    report.runs[index].figures.append(Figure("ratio_to_redis", ratio, "×"))
                }
                report.notes.append(
                    "\(workload.title(subscribers: subscribers)): Longlink \(BenchRendering.grouped(longlink)) vs Redis "
                        + "\(BenchRendering.grouped(redis)) user-space instructions per publish→delivery = \(format(ratio)) ×"
                )
            }
            if let longlink = allocationsPerDelivery["longlink"], let redis = allocationsPerDelivery["redis"] {
                report.notes.append(
                    "\(workload.title(subscribers: subscribers)): heap allocations per publish→delivery (calls to "
                        + CallgrindCalls.allocators.sorted().joined(separator: ", ") + "): Longlink "
                        + "\(String(format: "%.2f", longlink)) vs Redis \(String(format: "%.2f", redis))"
                )
            }
        }
        if let highest = priorities.max(), highest >= ownNiceness {
            report.notes.append(
                "the servers ran at niceness \(highest), no higher priority than bench's own \(ownNiceness) (not permitted): "
                    + "on a busy machine a server under callgrind may fall behind"
            )
        }
        report.notes.append(
            "servers under `nice -n \(CallgrindServers.priorityBoost) valgrind --tool=callgrind` (the gateway: `serve --store memory "
                + "--loops 1`); callgrind files in \(directory) (read with callgrind_annotate FILE); publishes: "
                + countsUsed.joined(separator: ", ")
                + "; per delivery = (instructions of the larger run − the smaller) / (deliveries of the larger − the smaller)"
        )
    }

    /// One server process under callgrind: start, fan out `messages` publishes to `subscribers`, end, read.
    private static func measure(
        _ system: String,
        workload: ProfileWorkload,
        subscribers: Int,
        messages: Int,
        round: Int,
        _ parameters: BenchParameters,
        _ servers: CallgrindServers,
        _ loops: BenchLoops,
        _ control: BenchControl,
        _ directory: String
    ) throws -> Measurement {
        let suffix = parameters.rounds > 1 ? "-round\(round)" : ""
        let file = "\(directory)/\(workload.kind.rawValue)-\(system)-\(messages)\(suffix).callgrind.out"
        try? FileManager.default.removeItem(atPath: file)
        let server = system == "longlink" ? try servers.startGateway(outputFile: file) : try servers.startRedis(outputFile: file)
        var stopped = false
        defer { if !stopped { server.child?.stop(grace: .seconds(10)) } }
        let niceness = server.pid.flatMap { CallgrindServers.niceness(of: $0) }
        let fanout = workload.fanout(subscribers: subscribers, messages: messages)
        // The publishing phase takes messages / rate; the bounds leave room for a server that callgrind slows down.
        let publishing = Double(messages) / workload.rate
        let runner = FanoutRunner(
            loops: loops,
            control: control,
            duration: .milliseconds(Int64((2 * publishing + 30) * 1000)),
            timeout: .milliseconds(Int64(max(parameters.timeout, 120) * 1000))
        )
        let target: FanoutSystem =
            system == "longlink" ? .longlink(BenchEndpoint(address: server.address, transport: nil, sources: nil)) : .redis(server.address)
        let run = runner.run(target, workload: fanout, label: "profile", serverPID: nil)
        let counts = try servers.stop(server, outputFile: file)
        stopped = true
        guard run.failures.isEmpty else {
            throw BenchError(
                "\(workload.kind.rawValue) \(system), \(messages) publishes: "
                    + run.failures.map { "\($0.value) × \($0.key)" }.sorted().joined(separator: ", ")
            )
        }
        guard let allocations = CallgrindCalls.read(file) else { throw BenchError("cannot read \(file)") }
        let deliveries = Int(run.figure("deliveries") ?? 0)
        guard deliveries > 0 else {
            throw BenchError("\(workload.kind.rawValue) \(system), \(messages) publishes: nothing was delivered")
        }
        return Measurement(
            published: Int(run.figure("acknowledged") ?? 0),
            deliveries: deliveries,
            lost: Int(run.figure("lost") ?? 0),
            duplicates: Int(run.figure("duplicates") ?? 0),
            publishesPerSecond: run.figure("publishes_per_second") ?? 0,
            medianLatencyMillis: Double(run.latency?.p50 ?? 0) / 1e6,
            instructions: counts.instructions ?? 0,
            allocations: allocations.total,
            file: file,
            niceness: niceness
        )
    }

    /// The two runs of one server in one round.
    struct ProfileRound {
        var small: Measurement
        var large: Measurement

        /// The deliveries the larger run made beyond the smaller.
        var extraDeliveries: Int { large.deliveries - small.deliveries }
        /// (instructions of the larger run − the smaller) / the extra deliveries; nil when there are none.
        var instructionsPerDelivery: Double? {
            extraDeliveries > 0 ? (Double(large.instructions) - Double(small.instructions)) / Double(extraDeliveries) : nil
        }
        /// The same for the calls to the C allocator.
        var allocationsPerDelivery: Double? {
            extraDeliveries > 0 ? (Double(large.allocations) - Double(small.allocations)) / Double(extraDeliveries) : nil
        }
    }

    /// The median of `values` (the mean of the middle two when their number is even); nil when empty.
    static func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    /// The figures of one server. The per-delivery figures are the medians over the rounds; the two runs shown
    /// (`small_…`, `large_…`) are those of the round whose instructions per delivery are the median (the lower
    /// middle one when the number of rounds is even), so with one round they are exactly the figure's inputs.
    private static func figures(_ rounds: [ProfileRound], workload: ProfileWorkload, subscribers: Int) -> [Figure] {
        let ranked = rounds.sorted { ($0.instructionsPerDelivery ?? 0) < ($1.instructionsPerDelivery ?? 0) }
        let shown = ranked[(ranked.count - 1) / 2]
        var figures = [
            Figure("subscribers", Double(subscribers)),
            Figure("routes", Double(workload.routes(subscribers: subscribers))),
            Figure("rate", workload.rate, "/s"),
            Figure("payload", Double(workload.payload), "B"),
            Figure("rounds", Double(rounds.count)),
        ]
        for (name, run) in [("small", shown.small), ("large", shown.large)] {
            figures += [
                Figure("\(name)_published", Double(run.published)),
                Figure("\(name)_publishes_per_second", run.publishesPerSecond, "/s"),
                Figure("\(name)_latency_p50", run.medianLatencyMillis, "ms"),
                Figure("\(name)_deliveries", Double(run.deliveries)),
                Figure("\(name)_instructions", Double(run.instructions)),
                Figure("\(name)_allocations", Double(run.allocations)),
            ]
        }
        figures.append(Figure("lost", Double(rounds.reduce(0) { $0 + $1.small.lost + $1.large.lost })))
        figures.append(Figure("duplicates", Double(rounds.reduce(0) { $0 + $1.small.duplicates + $1.large.duplicates })))
        let instructions = rounds.compactMap(\.instructionsPerDelivery)
        if let value = median(instructions) {
            figures.append(Figure("instructions_per_delivery", value))
            if instructions.count > 1, let low = instructions.min(), let high = instructions.max() {
                figures.append(Figure("instructions_per_delivery_min", low))
                figures.append(Figure("instructions_per_delivery_max", high))
            }
        }
        if let value = median(rounds.compactMap(\.allocationsPerDelivery)) {
            figures.append(Figure("allocations_per_delivery", value))
        }
        return figures
    }
}
