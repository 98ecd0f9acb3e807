import Foundation
import LonglinkLoop

/// `longlink bench fanout --cross-node 'URL;URL…'`: the fan-out with every record crossing nodes, on several
/// backends in one run. For each Redis or Redis Cluster URL two `longlink serve` children are started with that URL
/// as store and broker; subscribers connect to the first, the publisher to the second. Rounds alternate between
/// the backends (`--rounds` times each), so a cluster and a single Redis are compared on the same machine state.
/// The report's note gives each backend's best deliveries/s and p99 and the ratio to the first backend.
enum CrossNodeScenario {
    static func run(_ parameters: BenchParameters, control: BenchControl, executable: String?, into report: inout BenchReport) throws {
        guard let executable = executable ?? BenchServers.selfExecutable else {
            throw BenchError("cannot find the longlink executable to start the nodes")
        }
        var started: [BenchServer] = []
        defer { for server in started { server.stop() } }
        var pairs: [(url: String, subscribers: BenchServer, publisher: BenchServer)] = []
        for url in parameters.crossNode {
            control.progress("cross-node: starting two nodes on \(url)")
            let flags = ["--store", url, "--broker", url]
            let first = try BenchServers.startGateway(executable: executable, extraFlags: flags)
            started.append(first)
            let second = try BenchServers.startGateway(executable: executable, extraFlags: flags)
            started.append(second)
            pairs.append((url, first, second))
        }
        let loops = try BenchLoops(threads: parameters.threads)
        defer { loops.shutdown() }
        let runner = FanoutRunner(loops: loops, control: control, duration: parameters.durationLimit, timeout: parameters.timeoutLimit)
        let workload = parameters.workload
        let base = "fanout S=\(workload.subscribers) T=\(workload.routes) M=\(workload.messages) R=\(format(workload.rate)) P=\(workload.payload)"
        for _ in 0..<parameters.rounds {
            for pair in pairs where !control.isInterrupted {
                let subscribers = BenchEndpoint(address: pair.subscribers.address, transport: nil, sources: nil)
                let publisher = BenchEndpoint(address: pair.publisher.address, transport: nil, sources: nil)
                report.runs.append(
                    runner.run(
                        .longlink(subscribers),
                        workload: workload,
                        label: "\(base) cross-node on \(pair.url)",
                        serverPID: pair.subscribers.pid,
                        publishTo: publisher
                    )
                )
            }
        }
        report.notes += summary(report.runs, urls: parameters.crossNode)
    }

    /// Each backend's best deliveries/s with its p99, and the ratio to the first backend's.
    static func summary(_ runs: [BenchRun], urls: [String]) -> [String] {
        var best: [(url: String, deliveries: Double, p99: Double?)] = []
        for url in urls {
            let mine = runs.filter { $0.label.hasSuffix("cross-node on \(url)") }
            guard let top = mine.max(by: { ($0.figure("deliveries_per_second") ?? 0) < ($1.figure("deliveries_per_second") ?? 0) }) else { continue }
            best.append((url, top.figure("deliveries_per_second") ?? 0, top.latency.map { Double($0.p99) / 1e6 }))
        }
        guard let first = best.first else { return [] }
        return best.map { entry in
            let ratio = first.deliveries > 0 ? entry.deliveries / first.deliveries : 0
            let p99 = entry.p99.map { String(format: "%.2f ms", $0) } ?? "n/a"
            return "cross-node on \(entry.url): best \(Int(entry.deliveries)) deliveries/s, p99 \(p99), "
                + String(format: "%.2f× the first backend", ratio)
        }
    }
}
