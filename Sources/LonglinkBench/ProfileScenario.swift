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
            for system in ["longlink", "redis"] {
                var measurements: [Measurement] = []
                for count in counts {
                    guard !control.isInterrupted else { break }
                    control.progress("bench profile: \(kind.rawValue), \(system), \(count) publishes")
                    measurements.append(
                        try measure(system, workload: workload, subscribers: subscribers, messages: count, parameters, servers, loops, control, directory)
                    )
                }
                guard measurements.count == 2 else { break }
                var run = BenchRun(system: system, label: "profile \(workload.title(subscribers: subscribers))")
                run.figures = figures(measurements, workload: workload, subscribers: subscribers)
                run.files = measurements.map(\.file)
                priorities.formUnion(measurements.compactMap(\.niceness))
                if let value = run.figure("instructions_per_delivery") { perDelivery[system] = value }
                if let value = run.figure("allocations_per_delivery") { allocationsPerDelivery[system] = value }
                report.runs.append(run)
                for measurement in measurements where measurement.lost > 0 || measurement.duplicates > 0 {
                    report.notes.append(
                        "\(kind.rawValue) \(system), \(measurement.published) publishes: \(measurement.lost) lost, "
                            + "\(measurement.duplicates) duplicates (the figure is not comparable)"
                    )
                }
                // A server that takes longer than the interval between publishes to deliver one batches the next ones
                // together, which costs fewer instructions per delivery than the steady rate does: the figure is then
                // low. Under callgrind that happens when the machine does not give the server the core it needs.
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
        _ parameters: BenchParameters,
        _ servers: CallgrindServers,
        _ loops: BenchLoops,
        _ control: BenchControl,
        _ directory: String
    ) throws -> Measurement {
        let file = "\(directory)/\(workload.kind.rawValue)-\(system)-\(messages).callgrind.out"
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

    /// The figures of one server: both runs, and the instructions per delivery between them.
    private static func figures(_ runs: [Measurement], workload: ProfileWorkload, subscribers: Int) -> [Figure] {
        let small = runs[0]
        let large = runs[1]
        var figures = [
            Figure("subscribers", Double(subscribers)),
            Figure("routes", Double(workload.routes(subscribers: subscribers))),
            Figure("rate", workload.rate, "/s"),
            Figure("payload", Double(workload.payload), "B"),
        ]
        for (name, run) in [("small", small), ("large", large)] {
            figures += [
                Figure("\(name)_published", Double(run.published)),
                Figure("\(name)_publishes_per_second", run.publishesPerSecond, "/s"),
                Figure("\(name)_latency_p50", run.medianLatencyMillis, "ms"),
                Figure("\(name)_deliveries", Double(run.deliveries)),
                Figure("\(name)_instructions", Double(run.instructions)),
                Figure("\(name)_allocations", Double(run.allocations)),
            ]
        }
        figures.append(Figure("lost", Double(small.lost + large.lost)))
        figures.append(Figure("duplicates", Double(small.duplicates + large.duplicates)))
        let extra = large.deliveries - small.deliveries
        if extra > 0 {
            let instructions = Double(large.instructions) - Double(small.instructions)
            figures.append(Figure("instructions_per_delivery", instructions / Double(extra)))
            let allocations = Double(large.allocations) - Double(small.allocations)
            figures.append(Figure("allocations_per_delivery", allocations / Double(extra)))
        }
        return figures
    }
}
