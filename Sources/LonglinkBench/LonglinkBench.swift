import Foundation
import LonglinkLoop
import LonglinkRedis
import LonglinkWebSocket

/// `longlink bench`: load scenarios against a Longlink gateway (and Redis pub/sub for comparison), and the
/// in-process store and codec figures. `BenchCommand` parses flags into `BenchParameters` and calls `run`.
public enum LonglinkBench {
    /// Runs the scenario `parameters` name and returns its report. Blocks the calling thread (run it off the
    /// concurrency pool); `control` carries Ctrl-C and progress. `executable` is the `longlink` binary used to
    /// start a gateway when `parameters.server` is nil (default: this process's own executable).
    public static func run(
        _ parameters: BenchParameters,
        command: String,
        control: BenchControl = BenchControl(),
        executable: String? = nil
    ) throws -> BenchReport {
        try parameters.validate()
        var report = BenchReport(scenario: parameters.scenario.rawValue, command: command)
        switch parameters.scenario {
        case .store:
            report.runs = StoreScenario.run(parameters, control: control)
        case .codec:
            report.runs = CodecScenario.run(parameters)
        case .fanout where !parameters.crossNode.isEmpty:
            try CrossNodeScenario.run(parameters, control: control, executable: executable, into: &report)
        case .profile:
            try ProfileScenario.run(parameters, control: control, executable: executable, into: &report)
        case .fanout, .connect, .idle, .churn, .storm, .orders, .httpPublish, .line:
            try withServers(parameters, executable: executable) { servers in
                let loops = try BenchLoops(threads: parameters.threads)
                defer { loops.shutdown() }
                let context = ScenarioContext(parameters: parameters, loops: loops, control: control, servers: servers)
                try runNetworkScenario(context, into: &report)
                if let sources = servers.sources { reportSources(sources, into: &report) }
            }
        }
        report.targets = Targets.check(report, parameters: parameters)
        report.interrupted = control.isInterrupted
        return report
    }

    private static func runNetworkScenario(_ context: ScenarioContext, into report: inout BenchReport) throws {
        let parameters = context.parameters
        if parameters.workers > 1 && parameters.workerIndex == nil {
            if parameters.scenario == .connect { return try BenchWorkers.connect(context, into: &report) }
            if parameters.scenario == .idle { return try BenchWorkers.idle(context, into: &report) }
        }
        switch context.parameters.scenario {
        case .fanout: try FanoutScenario.run(context, into: &report)
        case .connect: try ConnectionScenarios.connect(context, into: &report)
        case .idle: try ConnectionScenarios.idle(context, into: &report)
        case .storm: try StormScenario.run(context, into: &report)
        case .churn: try ChurnScenario.run(context, into: &report)
        case .orders: try OrdersScenario.run(context, into: &report)
        case .httpPublish: try HTTPPublishScenario.run(context, into: &report)
        case .line: try LineScenario.run(context, into: &report)
        case .store, .codec, .profile: break
        }
    }

    /// Notes how the `--source-addresses` were used and adds the counts to every Longlink run (runs merged from
    /// `--workers` already carry the workers' counts).
    private static func reportSources(_ sources: BenchSources, into report: inout BenchReport) {
        let summary = sources.summary
        for index in report.runs.indices where report.runs[index].system == "longlink" {
            guard report.runs[index].figure("source_addresses") == nil else { continue }
            report.runs[index].figures += [
                Figure("source_addresses", Double(summary.configured)),
                Figure("source_addresses_used", Double(summary.used)),
                Figure("source_fallovers", Double(summary.fallovers)),
            ]
        }
        guard let run = report.runs.first(where: { $0.system == "longlink" }) else { return }
        let used = Int(run.figure("source_addresses_used") ?? 0)
        let fallovers = Int(run.figure("source_fallovers") ?? 0)
        report.notes.append(
            "source addresses \(sources.description): \(used) of \(summary.configured) used; \(fallovers) connections fell "
                + "over to the next address (EADDRNOTAVAIL/EADDRINUSE)"
        )
    }

    /// Starts (or names) the gateway and, when comparing, Redis; stops what it started, also when `body` throws.
    static func withServers(
        _ parameters: BenchParameters,
        executable: String?,
        _ body: (BenchServerSet) throws -> Void
    ) throws {
        var started: [BenchServer] = []
        var certificates: BenchCertificates?
        var restarter: BenchGatewayRestarter?
        var storeDirectory: String?
        defer {
            restarter?.stop()
            for server in started { server.stop() }
            certificates?.remove()
            if let storeDirectory { try? FileManager.default.removeItem(atPath: storeDirectory) }
        }
        var gateway: BenchServer
        if let text = parameters.server {
            let address = try parseHostPort(text)
            // A gateway on this machine is found by its listening port, for its CPU and memory figures.
            let local = address.host.hasPrefix("127.") || address.host == "::1"
            gateway = BenchServer(address: address, pid: local ? ListeningProcess.pid(listeningOn: Int(address.port)) : nil)
        } else {
            guard let executable = executable ?? BenchServers.selfExecutable else {
                throw BenchError("cannot find the longlink executable to start a gateway; pass --server HOST:PORT")
            }
            var flags: [String] = []
            if parameters.scenario == .httpPublish { flags += ["--api-listen", "127.0.0.1:0"] }
            if parameters.tls {
                let made = try BenchCertificates()
                certificates = made
                flags += [
                    "--tls-listen", "127.0.0.1:0", "--tls-cert", made.certificateFile, "--tls-key", made.keyFile,
                    "--tls-ticket-keys", made.ticketKeyFile,
                ]
            }
            if parameters.transport == .ws {
                flags += [parameters.tls ? "--wss-listen" : "--ws-listen", "127.0.0.1:0"]
            }
            if parameters.scenario == .storm && parameters.restart {
                // Records must survive the kill: a SQLite store in a directory of its own (file, -wal, -shm).
                let directory = BenchServers.temporaryPath("longlink-bench-store", "d")
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                storeDirectory = directory
                flags += ["--store", "sqlite:\(directory)/store.sqlite"]
            }
            gateway = try BenchServers.startGateway(executable: executable, extraFlags: flags)
            started.append(gateway)
            if parameters.scenario == .storm && parameters.restart {
                restarter = BenchGatewayRestarter(executable: executable, gateway: gateway)
            }
            // With --tls the scenario connects to the TLS listener.
            if parameters.tls { gateway.address = gateway.tlsAddress ?? gateway.address }
        }
        var redis: BenchServer?
        if let against = parameters.against {
            if against == "redis" {
                let server = try BenchServers.startRedis()
                started.append(server)
                redis = server
            } else if let address = RedisAddress(url: against) {
                let socketAddress = try SocketAddress.resolve(host: address.host, port: address.port).first!
                redis = BenchServer(address: socketAddress, pid: RedisProbe.processID(socketAddress))
            }
        }
        let publishGateway = try parameters.publishServer.map { text in BenchServer(address: try parseHostPort(text, option: "--publish-server")) }
        var servers = BenchServerSet(
            gateway: gateway,
            publishGateway: publishGateway,
            redis: redis,
            executable: executable ?? BenchServers.selfExecutable
        )
        servers.restarter = restarter
        if !parameters.sourceAddresses.isEmpty {
            guard !gateway.address.host.contains(":") else {
                throw BenchError("--source-addresses are IPv4 loopback addresses; the gateway is at \(gateway.address)")
            }
            do {
                servers.sources = try BenchSources(parameters.sourceAddresses)
            } catch {
                throw BenchError("--source-addresses: \(error)")
            }
        }
        if parameters.tls {
            let caFile = parameters.insecure ? nil : parameters.caFile ?? certificates?.caFile
            let serverName = parameters.server.map { text in
                let host = String(text[..<(text.lastIndex(of: ":") ?? text.endIndex)])
                return host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
            } ?? "127.0.0.1"
            servers.tls = try BenchTLS.clientFactory(
                caFile: caFile, insecure: parameters.insecure, serverName: serverName, tls12Only: parameters.tls12Only
            )
            servers.caFile = caFile
        }
        if parameters.transport == .ws {
            var webSocketGateway = gateway
            if parameters.scenario == .idle && parameters.server == nil, let executable = executable ?? BenchServers.selfExecutable {
                // Memory per idle connection is RSS growth: a second gateway, so the WebSocket connections do not
                // reuse the heap the TCP run freed.
                webSocketGateway = try BenchServers.startGateway(
                    executable: executable, flags: gateway.launchFlags ?? BenchServers.gatewayFlags, listen: "127.0.0.1:0", timeout: .seconds(20)
                )
                started.append(webSocketGateway)
                servers.webSocketGateway = webSocketGateway
            }
            let address = try parameters.webSocketServer.map { text in try parseHostPort(text, option: "--ws-server") } ?? webSocketGateway.webSocketAddress
            guard let address else { throw BenchError("the gateway has no WebSocket listener") }
            let factory = WebSocketClientTransportFactory(inner: servers.tls ?? PlainTransportFactory(), host: address.description)
            servers.webSocket = BenchEndpoint(
                address: address, transport: factory, label: parameters.tls ? " over WebSocket+TLS" : " over WebSocket", sources: servers.sources
            )
        }
        try body(servers)
    }

    static func parseHostPort(_ text: String, option: String = "--server") throws -> SocketAddress {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]) else {
            throw BenchError("\(option) expects HOST:PORT, got '\(text)'")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard let address = try SocketAddress.resolve(host: host, port: port).first else {
            throw BenchError("cannot resolve \(host)")
        }
        return address
    }
}

/// The servers of one invocation.
struct BenchServerSet: Sendable {
    /// The gateway under test.
    var gateway: BenchServer
    /// fanout: the node the publisher connects to, when it is not `gateway` (`--publish-server`).
    var publishGateway: BenchServer? = nil
    /// Redis, when comparing.
    var redis: BenchServer?
    /// The `longlink` executable (for restarts and workers).
    var executable: String?
    /// With `--tls`: the client transport factory the connections use.
    var tls: (any TransportFactory)? = nil
    /// With `--transport ws`: how the WebSocket runs connect.
    var webSocket: BenchEndpoint? = nil
    /// idle `--transport ws` on bench's own gateway: the gateway the WebSocket run measures (a fresh one).
    var webSocketGateway: BenchServer? = nil
    /// With `--tls`: the CA file the client trusts (nil: system store or `--insecure`), handed on to workers.
    var caFile: String? = nil
    /// With `--source-addresses`: the local addresses Longlink connections bind to.
    var sources: BenchSources? = nil
    /// storm --restart: kills and restarts bench's own gateway.
    var restarter: BenchGatewayRestarter? = nil
}

/// What a network scenario gets.
struct ScenarioContext: Sendable {
    let parameters: BenchParameters
    let loops: BenchLoops
    let control: BenchControl
    var servers: BenchServerSet

    /// How Longlink connections reach the gateway under test (address, TLS, source addresses).
    var endpoint: BenchEndpoint {
        BenchEndpoint(address: servers.gateway.address, transport: servers.tls, label: servers.tls == nil ? "" : " over TLS", sources: servers.sources)
    }

    /// With `--transport ws`: how the WebSocket runs reach the gateway.
    var webSocketEndpoint: BenchEndpoint? { servers.webSocket }
}
