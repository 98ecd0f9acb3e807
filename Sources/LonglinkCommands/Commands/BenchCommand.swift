import Foundation
import LonglinkBench
import LonglinkJSON
import LonglinkLoop

/// `longlink bench SCENARIO`: load scenarios against a gateway (started for the run unless `--server` names
/// one), with a same-run Redis pub/sub baseline (`--against`), and the in-process store and codec figures. Flags
/// are parsed here; everything else lives in the LonglinkBench module.
public enum BenchCommand {
    /// The command.
    public static let command = Command(
        name: "bench",
        summary: "load-test a gateway (and Redis pub/sub for comparison); store and codec figures",
        usage: "SCENARIO [options]   (scenarios: \(BenchParameters.Scenario.allCases.map(\.rawValue).joined(separator: ", ")))",
        details: """
            connect  open --connections N as fast as possible; connections/s, connect latency, failures by reason
            fanout   --subscribers S over --routes T, --messages M at --rate R (0 = as fast as acknowledged),
                     --payload P bytes; deliveries/s, publish→deliver latency percentiles, lost and duplicates
            orders   ride-hailing lifecycles on T orders with a rider and a driver subscribed to each
            churn    the fan-out while --churn-rate connections/s open and close; latency with and without
            storm    S subscribers cut at once reconnect and resume; time to recover, lost (must be 0), duplicates;
                     --restart kills bench's own gateway (SIGKILL, SQLite store) and restarts it on the same port
            idle     --connections N idle subscribed connections; server RSS per connection and idle CPU
            store    changes/s of the memory and SQLite stores (--messages changes)
            codec    frames/s of the protobuf codec and bytes per push against JSON (--messages iterations)
            profile  user-space instructions per publish→delivery of the gateway (--binary, memory store, one loop)
                     and of redis-server, both under valgrind --tool=callgrind, at --counts A,B publishes each
                     (default: 4 s and 14 s at the rate) of --workloads many-routes (S subscribers each on its own
                     route, 500/s, 128 B) and broadcast (S on one route, 50/s, 64 B); (instructions at B − at A) /
                     (deliveries at B − at A), the ratio, and the callgrind files (--profile-dir) for callgrind_annotate;
                     --rounds N measures both servers N times, alternating, and reports the medians
            http-publish  --connections keep-alive HTTP connections to the backend API (POST /api/v1/publish), closed
                     loop; changes/s and request→response latency (with --server: the API's HOST:PORT, LONGLINK_TOKEN)
            line     one order://taxi/* subscriber while --routes orders change at --rate (default 5,000/s); its own
                     publish→deliver latency, lost, out of order per order
            Without --server a `longlink serve --store memory` child is started on a free port and stopped
            afterwards. --against redis://HOST:PORT runs the same fan-out through Redis pub/sub in the same
            invocation (alternating, --rounds times) and prints the ratio; --against redis starts a
            redis-server for the run. fanout --publish-server HOST:PORT sends the publisher to another node
            than --server (both on one Redis store and broker): every record crosses nodes. fanout --cross-node
            'redis://H:P;redis-cluster://H:P,H:P' starts two nodes per URL (store and broker there) and alternates
            the cross-node fan-out between them. store --store-url URL adds that Redis (Cluster) store behind the
            StoreWriter, acknowledged changes/s without and with WAIT 1.
            --tls runs every network scenario over TLS (bench's own gateway gets a throwaway CA and certificate;
            the Redis baseline stays plain TCP: hiredis 0.14 has no TLS). --source-addresses 8 (or
            127.0.0.1-127.0.0.8, or a comma list) binds connection i to 127.0.0.(1 + i mod 8) before connecting,
            falling over to the next address on EADDRNOTAVAIL, when one address runs out of ephemeral ports.
            --transport ws (fanout, connect, idle) runs the scenario over raw TCP, then over WebSocket on the same
            gateway (wss with --tls; with --server, name its WebSocket listener with --ws-server), and reports the
            WebSocket run's ratio to TCP (throughput) or its extra bytes per idle connection.
            Every run is bounded by --duration and --timeout; Ctrl-C prints what was measured so far.
            """,
        maximumPositionals: 1,
        options: specs,
        run: run
    )

    /// The options of `longlink bench`.
    static let specs: [OptionSpec] = [
        OptionSpec("server", valueName: "HOST:PORT", help: "gateway to test (default: start one)"),
        OptionSpec(
            "publish-server",
            valueName: "HOST:PORT",
            help: "fanout: the publisher connects to this node (same Redis as --server) so records cross nodes",
            configurable: false
        ),
        OptionSpec("subscribers", default: "1000", valueName: "S", help: "subscribers", configurable: false),
        OptionSpec("routes", default: "100", valueName: "T", help: "routes (subscriber i on route i mod T)", configurable: false),
        OptionSpec("messages", valueName: "M", help: "changes to publish (store: changes; codec: iterations)", configurable: false),
        OptionSpec("rate", default: "0", valueName: "R", help: "publishes per second; 0 = as fast as acknowledged", configurable: false),
        OptionSpec("payload", default: "64", valueName: "BYTES", help: "payload bytes per change (≥ 16)", configurable: false),
        OptionSpec("connections", default: "1000", valueName: "N", help: "connections (connect, idle, churn)", configurable: false),
        OptionSpec("duration", default: "10s", valueName: "DURATION", help: "longest measured phase", configurable: false),
        OptionSpec("timeout", default: "30s", valueName: "DURATION", help: "longest wait for connects and drains", configurable: false),
        OptionSpec("workers", default: "1", valueName: "K", help: "load-generating processes", configurable: false),
        OptionSpec("worker-index", valueName: "I", help: "internal: this process is worker I", configurable: false),
        OptionSpec("threads", default: "1", valueName: "N", help: "event-loop threads per load process", configurable: false),
        OptionSpec("window", default: "64", valueName: "N", help: "publishes in flight at most", configurable: false),
        OptionSpec(
            "reader",
            valueName: "epoll|io_uring",
            help: "fanout: how subscribers read (default: io_uring where the kernel allows it with --rate 0, else epoll)",
            configurable: false
        ),
        OptionSpec(
            "reader-batch",
            default: "1",
            valueName: "K",
            help: "--reader io_uring: completions a wake-up waits for (1: the first; more hold the publisher's answers)",
            configurable: false
        ),
        OptionSpec(
            "reader-wait-us",
            default: "50",
            valueName: "µS",
            help: "--reader-batch above 1: µs a completion waits for the others (a delivery is timed at most this late)",
            configurable: false
        ),
        OptionSpec("churn-rate", default: "200", valueName: "N", help: "churn: connections opened and closed per second", configurable: false),
        OptionSpec("rounds", default: "1", valueName: "N", help: "Longlink/Redis alternations with --against; profile: rounds, figures are medians", configurable: false),
        OptionSpec(
            "restart",
            kind: .flag,
            help: "storm: SIGKILL and restart bench's own gateway (SQLite store) instead of cutting clients",
            configurable: false
        ),
        OptionSpec("tls", kind: .flag, help: "every connection over TLS (own gateway: a throwaway CA and certificate)", configurable: false),
        OptionSpec(
            "transport",
            default: "tcp",
            valueName: "tcp|ws",
            help: "ws: after the TCP run, the same over WebSocket on the same gateway (fanout, connect, idle)",
            configurable: false
        ),
        OptionSpec("ws-server", valueName: "HOST:PORT", help: "--transport ws with --server: its WebSocket listener", configurable: false),
        OptionSpec(
            "source-addresses",
            valueName: "N|A-B|LIST",
            help: "bind connection i to 127.0.0.(1 + i mod N) (or A-B, or a comma list); next one on EADDRNOTAVAIL",
            configurable: false
        ),
        OptionSpec("ca-file", valueName: "FILE", help: "--tls: trust only the CAs in this PEM file", configurable: false),
        OptionSpec(
            "tls-max-version",
            valueName: "1.2|1.3",
            help: "--tls: highest TLS version the clients offer (1.2: resumptions are abbreviated TLS 1.2 handshakes)",
            configurable: false
        ),
        OptionSpec("insecure", kind: .flag, help: "--tls without certificate checks (prints a warning)", configurable: false),
        OptionSpec("json", kind: .flag, help: "print the report as JSON", configurable: false),
        OptionSpec("csv", valueName: "FILE", help: "write the per-second series as CSV", configurable: false),
        OptionSpec("svg", valueName: "FILE", help: "write latency and throughput charts as SVG", configurable: false),
        OptionSpec("against", valueName: "URL", help: "compare with Redis pub/sub: redis://HOST:PORT, or 'redis' to start one", configurable: false),
        OptionSpec(
            "cross-node",
            valueName: "URL[;URL…]",
            help: "fanout: per Redis / Redis Cluster URL, two serve nodes on it, subscribers on one, publisher on the other",
            configurable: false
        ),
        OptionSpec(
            "store-url",
            valueName: "URL",
            help: "store: also a redis:// or redis-cluster:// store behind the StoreWriter, without and with WAIT 1",
            configurable: false
        ),
        OptionSpec("binary", valueName: "PATH", help: "profile: the longlink binary to measure (default: this one)", configurable: false),
        OptionSpec("counts", valueName: "A,B", help: "profile: the two publish counts (default: 4 s and 14 s at each workload's rate)", configurable: false),
        OptionSpec(
            "workloads",
            valueName: "LIST",
            help: "profile: many-routes, broadcast, or both comma-separated (default both)",
            configurable: false
        ),
        OptionSpec("profile-dir", valueName: "DIR", help: "profile: where the callgrind files go (default: a new temporary directory)", configurable: false),
        OptionSpec("from-json", valueName: "FILE", help: "render a saved --json report (table, --svg, --csv) instead of running", configurable: false),
    ]

    /// Runs the scenario the options name and prints its report.
    @Sendable
    static func run(_ options: ResolvedOptions, _ context: CommandContext) async throws -> Int32 {
        if let path = options.string("from-json") { return try render(path, options, context) }
        let parameters = try parameters(options)
        let io = context.io
        if parameters.insecure && parameters.workerIndex == nil {
            io.err("WARNING: --insecure: the gateway's TLS certificate is NOT verified (fine on loopback, not across a network).")
        }
        var progress: (@Sendable (String) -> Void)?
        // Workers report progress too: their parent reads "... subscribed" from their stderr.
        if io.stdoutIsTerminal || parameters.workerIndex != nil {
            progress = { line in io.err("  " + line) }
        }
        let control = BenchControl(progress: progress)
        let commandLine = (["longlink", "bench"] + CommandLine.arguments.dropFirst(2)).joined(separator: " ")
        let report = try await runWatchingInterrupts(control: control) {
            try LonglinkBench.run(parameters, command: commandLine, control: control)
        }
        if let path = parameters.csv { try write(BenchRendering.csv(report), to: path) }
        if let path = parameters.svg { try write(BenchSVG.chart(report), to: path) }
        io.out(parameters.json ? report.jsonText() : BenchRendering.table(report))
        return 0
    }

    /// Turns resolved options into `BenchParameters`, with scenario-dependent defaults for `--messages`.
    static func parameters(_ options: ResolvedOptions) throws(CommandLineError) -> BenchParameters {
        guard let name = options.positionals.first else {
            throw CommandLineError("which scenario? \(BenchParameters.Scenario.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard let scenario = BenchParameters.Scenario(rawValue: name) else {
            throw CommandLineError("unknown scenario '\(name)'; one of \(BenchParameters.Scenario.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard options.positionals.count == 1 else { throw CommandLineError("one scenario at a time") }
        let defaultMessages = switch scenario {
        case .store: 400_000
        case .codec: 1_000_000
        default: 10_000
        }
        func seconds(_ option: String, _ fallback: Double) throws(CommandLineError) -> Double {
            guard let duration = try options.duration(option) else { return fallback }
            return Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        }
        var sources: [String] = []
        if let text = options.string("source-addresses") {
            do {
                sources = try BenchParameters.parseSourceAddresses(text)
            } catch {
                throw CommandLineError(error.message)
            }
        }
        var counts: [Int]?
        if let text = options.string("counts") {
            let values = text.split(separator: ",").map { Int($0.filter { !$0.isWhitespace }) }
            guard values.count == 2, let first = values[0], let second = values[1] else {
                throw CommandLineError("--counts expects two publish counts, e.g. 2000,7000; got '\(text)'")
            }
            counts = [first, second]
        }
        var workloads = ProfileWorkload.Kind.allCases
        if let text = options.string("workloads") {
            workloads = []
            for name in text.split(separator: ",").map({ String($0.filter { !$0.isWhitespace }) }) {
                guard let kind = ProfileWorkload.Kind(rawValue: name) else {
                    throw CommandLineError("--workloads: unknown workload '\(name)'; many-routes, broadcast")
                }
                if !workloads.contains(kind) { workloads.append(kind) }
            }
        }
        let transportText = options.string("transport") ?? "tcp"
        guard let transport = BenchParameters.Transport(rawValue: transportText) else {
            throw CommandLineError("--transport must be tcp or ws, got '\(transportText)'")
        }
        var parameters = BenchParameters(
            scenario: scenario,
            server: options.string("server"),
            subscribers: try options.int("subscribers") ?? 1_000,
            routes: try options.int("routes") ?? 100,
            messages: try options.int("messages") ?? defaultMessages,
            rate: try options.double("rate") ?? 0,
            payload: try options.bytes("payload") ?? 64,
            connections: try options.int("connections") ?? 1_000,
            duration: try seconds("duration", 10),
            timeout: try seconds("timeout", 30),
            workers: try options.int("workers") ?? 1,
            workerIndex: try options.int("worker-index"),
            threads: try options.int("threads") ?? 1,
            window: try options.int("window") ?? 64,
            churnRate: try options.double("churn-rate") ?? 200,
            rounds: try options.int("rounds") ?? 1,
            tls: options.flag("tls"),
            json: options.flag("json"),
            csv: options.string("csv"),
            svg: options.string("svg"),
            against: options.string("against"),
            restart: options.flag("restart"),
            publishServer: options.string("publish-server"),
            caFile: options.string("ca-file"),
            insecure: options.flag("insecure"),
            sourceAddresses: sources,
            binary: options.string("binary"),
            profileCounts: counts,
            profileWorkloads: workloads,
            profileDirectory: options.string("profile-dir")
        )
        parameters.crossNode = options.string("cross-node").map { $0.split(separator: ";").map(String.init) } ?? []
        parameters.storeURL = options.string("store-url")
        parameters.transport = transport
        switch options.string("tls-max-version") {
        case nil, "1.3": parameters.tls12Only = false
        case "1.2": parameters.tls12Only = true
        case let other?: throw CommandLineError("--tls-max-version must be 1.2 or 1.3, got \(other)")
        }
        parameters.webSocketServer = options.string("ws-server")
        if let text = options.string("reader") {
            guard let reader = BenchReader(rawValue: text) else {
                throw CommandLineError("--reader must be epoll or io_uring, got '\(text)'")
            }
            parameters.reader = reader
        }
        parameters.readerBatch = try options.int("reader-batch") ?? parameters.readerBatch
        if let micros = try options.int("reader-wait-us") { parameters.readerWait = Double(micros) / 1e6 }
        do {
            try parameters.validate()
        } catch {
            throw CommandLineError(error.message)
        }
        return parameters
    }

    /// Runs `body` on its own thread (it blocks) while a signalfd turns Ctrl-C into `control.interrupt()`;
    /// a second Ctrl-C exits at once.
    static func runWatchingInterrupts(
        control: BenchControl,
        _ body: @escaping @Sendable () throws -> BenchReport
    ) async throws -> BenchReport {
        let watcher = try EventLoop(id: 2_000)
        let watcherThread = Thread {
            try? watcher.run { loop in
                var interrupts = 0
                _ = try? SignalSource(signals: [.interrupt, .terminate], on: loop) { _ in
                    interrupts += 1
                    if interrupts > 1 { exit(130) }
                    control.interrupt()
                }
            }
        }
        watcherThread.start()
        defer { watcher.stop() }
        return try await withCheckedThrowingContinuation { continuation in
            let worker = Thread {
                continuation.resume(with: Result { try body() })
            }
            worker.stackSize = 8 << 20
            worker.start()
        }
    }

    /// Re-renders a saved `--json` report (table, `--svg`, `--csv`) without running anything.
    static func render(_ path: String, _ options: ResolvedOptions, _ context: CommandContext) throws -> Int32 {
        let report: BenchReport
        do {
            report = try JSONValue.decode(BenchReport.self, from: Array(Data(contentsOf: URL(fileURLWithPath: path))))
        } catch {
            throw CommandFailure("cannot read a bench report from \(path): \(error)")
        }
        if let file = options.string("csv") { try write(BenchRendering.csv(report), to: file) }
        if let file = options.string("svg") { try write(BenchSVG.chart(report), to: file) }
        context.io.out(options.flag("json") ? report.jsonText() : BenchRendering.table(report))
        return 0
    }

    private static func write(_ text: String, to path: String) throws {
        do {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
        } catch {
            throw CommandFailure("cannot write \(path): \(error)")
        }
    }
}
