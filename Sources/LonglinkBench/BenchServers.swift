import Foundation
import Glibc
public import LonglinkLoop

/// A server the benchmark talks to: its address and, when it runs on this machine and its PID is known, its
/// process (for memory and CPU figures from /proc).
public struct BenchServer: Sendable {
    /// Where it listens.
    public var address: SocketAddress
    /// Its process id, when known.
    public var pid: Int32?
    /// The child process, when the benchmark started it (stopped with `stop()`).
    public var child: ChildProcess?
    /// The TLS listener, when the benchmark started the gateway with one.
    public var tlsAddress: SocketAddress?
    /// The WebSocket (or WebSocket-over-TLS) listener, when the benchmark started the gateway with one.
    public var webSocketAddress: SocketAddress?
    /// The `serve` flags after `--listen` it was started with, when the benchmark started it (for a restart).
    var launchFlags: [String]?

    /// Creates a description of a server.
    public init(address: SocketAddress, pid: Int32? = nil, child: ChildProcess? = nil, tlsAddress: SocketAddress? = nil) {
        self.address = address
        self.pid = pid
        self.child = child
        self.tlsAddress = tlsAddress
    }

    /// Memory and CPU now, when the process is known.
    public var stats: ProcessStats? { pid.flatMap { ProcessStats.read(pid: $0) } }

    /// Stops the child, if the benchmark started one.
    public func stop() { child?.stop() }
}

/// Starts servers for a benchmark run: a `longlink serve` child of this very executable, or a `redis-server`.
public enum BenchServers {
    /// Serve flags a benchmark gateway needs beyond the defaults: the memory store, large outbound queues (a
    /// closed-loop fan-out keeps deliveries in flight), room for 19,000 connections, quiet logs.
    public static let gatewayFlags = [
        "--store", "memory", "--outbound-limit", "64MiB", "--max-connections", "19500", "--max-subscriptions", "1024",
        "--log-level", "warning", "--metrics-listen", "off",
        // A load test opens thousands of loopback connections from one address at full speed: lift admission limits.
        "--connection-rate", "0", "--max-connections-per-address", "0", "--publish-rate", "0",
    ]

    /// The running executable (`/proc/self/exe`), or nil when it is not `longlink` (a test runner).
    public static var selfExecutable: String? {
        guard let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else { return nil }
        return path
    }

    /// Starts `executable serve` on `listen` (default: a free loopback port) and waits until it listens. Retries
    /// with `--insecure-dev` when the gateway insists on a token secret.
    public static func startGateway(
        executable: String,
        extraFlags: [String] = [],
        listen: String = "127.0.0.1:0",
        timeout: Duration = .seconds(20)
    ) throws -> BenchServer {
        do {
            return try startGateway(executable: executable, flags: gatewayFlags + extraFlags, listen: listen, timeout: timeout)
        } catch let error as BenchError where error.message.contains("insecure-dev") {
            return try startGateway(
                executable: executable,
                flags: gatewayFlags + extraFlags + ["--insecure-dev"],
                listen: listen,
                timeout: timeout
            )
        }
    }

    /// Starts `executable serve --listen LISTEN FLAGS` exactly as given (a restart reuses `launchFlags`). With a
    /// `wrapper` (e.g. `valgrind --tool=callgrind …`) the child is `wrapper executable serve …`; the wrapper runs the
    /// gateway in its own process, so the PID is the gateway's.
    static func startGateway(
        executable: String,
        flags: [String],
        listen: String,
        timeout: Duration,
        wrapper: [String] = []
    ) throws -> BenchServer {
        let log = temporaryPath("longlink-bench-gateway", "log")
        let command = wrapper + [executable, "serve", "--listen", listen] + flags
        let child = try ChildProcess(executable: command[0], arguments: Array(command.dropFirst()), logPath: log)
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let text = child.log
            if let port = servingPort(in: text) {
                let tlsAddress = try tlsPort(in: text).map { port throws in try SocketAddress(ipAddress: "127.0.0.1", port: port) }
                if flags.contains("--tls-listen") && tlsAddress == nil {
                    child.stop()
                    throw BenchError("the gateway did not report its TLS port: \(text)")
                }
                var server = BenchServer(
                    address: try SocketAddress(ipAddress: "127.0.0.1", port: port), pid: child.pid, child: child, tlsAddress: tlsAddress
                )
                if flags.contains("--ws-listen") || flags.contains("--wss-listen") {
                    guard let webSocketPort = webSocketPort(in: text) else {
                        child.stop()
                        throw BenchError("the gateway did not report its WebSocket port: \(text)")
                    }
                    server.webSocketAddress = try SocketAddress(ipAddress: "127.0.0.1", port: webSocketPort)
                }
                server.launchFlags = flags
                return server
            }
            if !child.isRunning {
                throw BenchError("the gateway did not start: \(text.trimmingCharacters(in: .whitespacesAndNewlines))")
            }
            usleep(20_000)
        }
        child.stop()
        throw BenchError("the gateway did not listen within \(timeout): \(child.log)")
    }

    /// The port in serve's banner, `serving on 127.0.0.1:PORT`.
    static func servingPort(in log: String) -> Int? {
        guard let range = log.range(of: "serving on ") else { return nil }
        let rest = log[range.upperBound...].prefix { $0 != " " && $0 != "\n" }
        guard let colon = rest.lastIndex(of: ":") else { return nil }
        return Int(rest[rest.index(after: colon)...])
    }

    /// The TLS port in serve's banner, `serving on 127.0.0.1:PORT and TLS on 127.0.0.1:PORT`.
    static func tlsPort(in log: String) -> Int? {
        guard let range = log.range(of: " and TLS on ") else { return nil }
        let rest = log[range.upperBound...].prefix { $0 != " " && $0 != "\n" }
        guard let colon = rest.lastIndex(of: ":") else { return nil }
        return Int(rest[rest.index(after: colon)...])
    }

    /// The WebSocket port in serve's banner (`... WebSocket on ws://127.0.0.1:PORT/longlink`, or `and
    /// wss://127.0.0.1:PORT/longlink`).
    static func webSocketPort(in log: String) -> Int? {
        guard let range = log.range(of: "ws://") ?? log.range(of: "wss://") else { return nil }
        let rest = log[range.upperBound...].prefix { $0 != "/" && $0 != " " && $0 != "\n" }
        guard let colon = rest.lastIndex(of: ":") else { return nil }
        return Int(rest[rest.index(after: colon)...])
    }

    /// Starts `redis-server` (from PATH) on a free loopback port without persistence and waits until it answers;
    /// with a `wrapper` (e.g. `valgrind --tool=callgrind …`) the child is `wrapper redis-server …`.
    public static func startRedis(timeout: Duration = .seconds(10), wrapper: [String] = []) throws -> BenchServer {
        guard let executable = findExecutable("redis-server") else {
            throw BenchError("redis-server is not installed (Debian package redis-server)")
        }
        let port = try freePort()
        let log = temporaryPath("longlink-bench-redis", "log")
        let command = wrapper + [
            executable,
            "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--maxclients", "19500",
            "--client-output-buffer-limit", "pubsub", "0", "0", "0", "--protected-mode", "no",
        ]
        let child = try ChildProcess(executable: command[0], arguments: Array(command.dropFirst()), logPath: log)
        let address = try SocketAddress(ipAddress: "127.0.0.1", port: port)
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if RedisProbe.ping(address) { return BenchServer(address: address, pid: child.pid, child: child) }
            if !child.isRunning { throw BenchError("redis-server did not start: \(child.log)") }
            usleep(20_000)
        }
        child.stop()
        throw BenchError("redis-server did not answer PING within \(timeout)")
    }

    /// A port free on 127.0.0.1 right now (bind to 0, read, close).
    static func freePort() throws -> Int {
        let fd = try Socket.listen(host: "127.0.0.1", port: 0)
        defer { Socket.close(fd) }
        return try Socket.localPort(fd)
    }

    static func findExecutable(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        let directories = path.split(separator: ":").map(String.init) + ["/usr/sbin", "/usr/bin"]
        return directories.map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    static func temporaryPath(_ prefix: String, _ suffix: String) -> String {
        "\(NSTemporaryDirectory())/\(prefix)-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).\(suffix)"
    }
}
