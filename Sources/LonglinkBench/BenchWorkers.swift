import Foundation
import Glibc
import LonglinkCore
import LonglinkJSON
import LonglinkLoop

/// `--workers K` for `connect` and `idle`: the connections are spread over K child processes (this very
/// `longlink` executable, re-run as `longlink bench SCENARIO --worker-index I --json` with a share of them), so a
/// run is not bounded by one process's open-file limit. Each worker prints its report as JSON on stdout; the parent
/// merges them: counts are summed, connect-latency histograms merged bucket by bucket. For `idle`, the parent
/// measures the server itself, once every worker reports its connections subscribed, and then stops the workers.
enum BenchWorkers {
    /// One running worker.
    private struct Worker {
        let index: Int
        let process: ChildProcess
        let outputPath: String
        let errorPath: String
    }

    /// `total` split into `workers` shares differing by at most one.
    static func shares(_ total: Int, workers: Int) -> [Int] {
        (0..<workers).map { total / workers + ($0 < total % workers ? 1 : 0) }
    }

    /// `connect` over K workers.
    static func connect(_ context: ScenarioContext, into report: inout BenchReport) throws {
        let parameters = context.parameters
        let workers = try startWorkers(context, duration: parameters.duration)
        defer { cleanUp(workers) }
        for worker in workers where !worker.process.waitForExit(timeout: context.parameters.timeoutLimit + .seconds(15)) {
            worker.process.stop()
        }
        let reports = try collect(workers)
        var run = merged(reports, label: "connect N=\(parameters.connections)\(parameters.tls ? " over TLS" : "") over K=\(workers.count) workers")
        let connected = run.figure("connected") ?? 0
        let seconds = reports.compactMap { $0.runs.first?.figure("seconds") }.max() ?? 0
        run.figures += [
            Figure("seconds", seconds, "s"),
            Figure("connections_per_second", seconds > 0 ? connected / seconds : 0, "/s"),
        ]
        if let stats = context.servers.gateway.stats { run.figures.append(Figure("server_rss_bytes", Double(stats.residentBytes), "B")) }
        report.runs.append(run)
        report.notes.append("connections per second: all connections over the slowest worker's time (the workers run at once)")
    }

    /// `idle` over K workers: waits for every worker to report its connections subscribed, measures the server's
    /// memory and idle CPU for `--duration`, then stops the workers (SIGTERM: each closes its connections and
    /// prints its report).
    static func idle(_ context: ScenarioContext, into report: inout BenchReport) throws {
        let parameters = context.parameters
        let pid = context.servers.gateway.pid
        usleep(300_000)
        let before = pid.flatMap { ProcessStats.read(pid: $0) }
        let start = MonotonicClock.nanoseconds()
        // Workers idle until stopped: their own duration only bounds a parent that died.
        let workers = try startWorkers(context, duration: parameters.duration + parameters.timeout + 30)
        defer { cleanUp(workers) }
        context.control.wait(timeout: parameters.timeoutLimit + .seconds(5), interval: .milliseconds(20)) {
            workers.allSatisfy { worker in
                !worker.process.isRunning || Self.text(worker.errorPath).contains("idle subscribed connections")
            }
        }
        let openSeconds = seconds(from: start, to: MonotonicClock.nanoseconds())
        context.control.progress("longlink: \(workers.count) workers hold their idle connections after \(Int(openSeconds * 1000)) ms")
        usleep(500_000)
        let loaded = pid.flatMap { ProcessStats.read(pid: $0) }
        let idleStart = MonotonicClock.nanoseconds()
        context.control.wait(timeout: parameters.durationLimit, interval: .milliseconds(100)) { false }
        let idleSeconds = seconds(from: idleStart, to: MonotonicClock.nanoseconds())
        let after = pid.flatMap { ProcessStats.read(pid: $0) }
        for worker in workers { worker.process.signal(SIGTERM) }
        for worker in workers where !worker.process.waitForExit(timeout: .seconds(20)) { worker.process.stop() }
        let reports = try collect(workers)
        var run = merged(reports, label: "idle N=\(parameters.connections) subscribed over T=\(parameters.routes) routes, K=\(workers.count) workers")
        run.figures += [Figure("open_seconds", openSeconds, "s"), Figure("idle_seconds", idleSeconds, "s")]
        let subscribed = run.figure("subscribed") ?? 0
        if let before, let loaded, let after, subscribed > 0 {
            run.figures += [
                Figure("server_rss_before_bytes", Double(before.residentBytes), "B"),
                Figure("server_rss_loaded_bytes", Double(loaded.residentBytes), "B"),
                Figure("server_bytes_per_connection", Double(loaded.residentBytes - before.residentBytes) / subscribed, "B"),
                Figure("server_idle_cpu_percent", 100 * (after.cpuSeconds - loaded.cpuSeconds) / max(idleSeconds, 0.001), "%"),
                Figure("server_open_files", Double(loaded.openFiles)),
            ]
        }
        let clientBytes = reports.compactMap { $0.runs.first?.figure("client_bytes_per_connection") }
        if !clientBytes.isEmpty {
            run.figures.append(Figure("client_bytes_per_connection", clientBytes.reduce(0, +) / Double(clientBytes.count), "B"))
        }
        report.runs.append(run)
    }

    /// Starts the workers, each with its share of `--connections`.
    private static func startWorkers(_ context: ScenarioContext, duration: Double) throws -> [Worker] {
        let parameters = context.parameters
        guard let executable = context.servers.executable else {
            throw BenchError("--workers needs the longlink executable to re-run; it was not found")
        }
        var workers: [Worker] = []
        for (index, share) in shares(parameters.connections, workers: parameters.workers).enumerated() {
            var arguments = [
                "bench", parameters.scenario.rawValue, "--server", context.servers.gateway.address.description,
                "--connections", String(share), "--routes", String(parameters.routes), "--threads", String(parameters.threads),
                "--duration", "\(Int((duration * 1000).rounded(.up)))ms", "--timeout", "\(Int((parameters.timeout * 1000).rounded(.up)))ms",
                "--worker-index", String(index), "--json",
            ]
            if !parameters.sourceAddresses.isEmpty {
                arguments += ["--source-addresses", parameters.sourceAddresses.joined(separator: ",")]
            }
            if parameters.tls {
                arguments.append("--tls")
                if let caFile = context.servers.caFile { arguments += ["--ca-file", caFile] }
                if parameters.insecure { arguments.append("--insecure") }
            }
            let outputPath = BenchServers.temporaryPath("longlink-bench-worker\(index)", "json")
            let errorPath = BenchServers.temporaryPath("longlink-bench-worker\(index)", "log")
            do {
                let process = try ChildProcess(executable: executable, arguments: arguments, logPath: outputPath, errorPath: errorPath)
                workers.append(Worker(index: index, process: process, outputPath: outputPath, errorPath: errorPath))
            } catch {
                cleanUp(workers)
                throw error
            }
        }
        return workers
    }

    /// Every worker's report; throws with a worker's stderr when one printed none.
    private static func collect(_ workers: [Worker]) throws -> [BenchReport] {
        try workers.map { worker in
            let output = text(worker.outputPath)
            guard let report = try? JSONValue.decode(BenchReport.self, from: Array(output.utf8)) else {
                let errors = text(worker.errorPath).trimmingCharacters(in: .whitespacesAndNewlines)
                throw BenchError("worker \(worker.index) printed no report: \(errors.isEmpty ? output : errors)")
            }
            return report
        }
    }

    /// One run from the workers' first runs: summed counts and failures, merged connect latency.
    private static func merged(_ reports: [BenchReport], label: String) -> BenchRun {
        let runs = reports.compactMap(\.runs.first)
        var run = BenchRun(system: "longlink", label: label)
        for name in ["connections", "connected", "subscribed", "failed", "open_after_idle", "source_fallovers"] {
            let values = runs.compactMap { $0.figure(name) }
            if !values.isEmpty { run.figures.append(Figure(name, values.reduce(0, +))) }
        }
        for name in ["source_addresses", "source_addresses_used"] {
            if let most = runs.compactMap({ $0.figure(name) }).max() { run.figures.append(Figure(name, most)) }
        }
        run.figures.append(Figure("workers", Double(reports.count)))
        var connect = LatencyHistogram()
        for part in runs {
            if let summary = part.connectLatency, let buckets = part.connectBuckets {
                connect.merge(
                    LatencyHistogram(
                        buckets: buckets.compactMap { $0.count == 2 ? ($0[0], $0[1]) : nil },
                        minimum: summary.min,
                        maximum: summary.max,
                        sum: summary.mean * Double(summary.count)
                    )
                )
            }
            run.failures.merge(part.failures, uniquingKeysWith: +)
        }
        run.setConnectLatency(connect)
        return run
    }

    private static func cleanUp(_ workers: [Worker]) {
        for worker in workers {
            worker.process.stop(grace: .seconds(2))
            try? FileManager.default.removeItem(atPath: worker.outputPath)
            try? FileManager.default.removeItem(atPath: worker.errorPath)
        }
    }

    private static func text(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
}
