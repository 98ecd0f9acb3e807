import Foundation
import Glibc
import LonglinkCommands
import LonglinkTestSupport
import Testing

/// `longlink serve` as a child process with JWT tokens, a plain and a TLS listener (certificate from the test CA)
/// and the operations listener, all on free loopback ports.
final class SecuredServeProcess {
    let process: ChildProcess
    let output = OutputCollector()
    let directory: TemporaryDirectory
    let secretFile: String
    let plainPort: Int
    let tlsPort: Int
    let metricsPort: Int

    init(_ certificates: TestCertificates) throws {
        directory = try TemporaryDirectory()
        secretFile = directory.path + "/secret"
        try String(repeating: "client-errors-", count: 4).write(toFile: secretFile, atomically: true, encoding: .utf8)
        chmod(secretFile, 0o600)
        let binary = try #require(ServeOperationsTests.longlinkPath(), "longlink is not built")
        process = try ChildProcess(binary, [
            "serve", "--listen", "127.0.0.1:0", "--tls-listen", "127.0.0.1:0", "--tls-cert", certificates.serverCertificate,
            "--tls-key", certificates.serverKey, "--secret-file", secretFile, "--metrics-listen", "127.0.0.1:0",
            "--store", "memory", "--loops", "1", "--drain-period", "200ms", "--log-format", "text",
        ], standardError: output.path)
        plainPort = output.waitForMatch(after: "serving on 127.0.0.1:", seconds: 20) ?? 0
        tlsPort = output.waitForMatch(after: "and TLS on 127.0.0.1:", seconds: 5) ?? 0
        metricsPort = output.waitForMatch(after: "operations: http://127.0.0.1:", seconds: 5) ?? 0
        guard plainPort > 0, tlsPort > 0, metricsPort > 0 else {
            stop()
            throw GatewayStartError(output: output.text)
        }
    }

    var plain: String { "127.0.0.1:\(plainPort)" }
    var tls: String { "127.0.0.1:\(tlsPort)" }

    /// A token minted by `longlink token` with this gateway's secret.
    func token(sub: String = "rider-1", role: String = "subscriber", routes: String = "*", ttl: String = "10m") throws -> String {
        let run = try runCLI(["token", "--secret-file", secretFile, "--sub", sub, "--role", role, "--routes", routes, "--ttl", ttl])
        try #require(run.code == 0, "token: \(run.stderr)")
        return run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The value of one Prometheus sample line starting with `prefix` (nil when absent).
    func metric(_ prefix: String) throws -> Double? {
        let text = try HTTPTestClient.fetch(port: metricsPort, "GET", "/metrics").text
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }) else { return nil }
        return Double(line.split(separator: " ").last ?? "")
    }

    /// SIGTERM, then SIGKILL if it is still running after a few seconds.
    func stop() { _ = process.terminate(timeout: .seconds(10)) }

    deinit { stop() }
}

struct GatewayStartError: Error, CustomStringConvertible {
    var output: String
    var description: String { "longlink serve did not start: \(output)" }
}

/// What a `longlink` child process left behind.
struct CLIRun {
    var code: Int32
    var stdout: String
    var stderr: String
    /// From spawn to exit.
    var elapsed: Duration
}

/// Runs the `longlink` binary as a child process (its own runtime: a busy test process cannot slow it down) with
/// `environment` added to this process's environment minus any `LONGLINK_*` variable.
func runCLI(_ arguments: [String], environment: [String: String] = [:]) throws -> CLIRun {
    let binary = try #require(ServeOperationsTests.longlinkPath(), "longlink is not built")
    var merged = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("LONGLINK_") }
    merged.merge(environment) { _, new in new }
    let started = ContinuousClock.now
    let output = try ProcessRunner.run([binary] + arguments, environment: merged, timeout: .seconds(30))
    return CLIRun(
        code: output.status,
        stdout: String(decoding: output.stdout, as: UTF8.self),
        stderr: output.stderr,
        elapsed: ContinuousClock.now - started
    )
}

/// The CLI's failures say what happened, fast: each case gets its own message and exit code well inside the
/// `--timeout` (10 s; "fast" is a behaviour bound of 3 s here, far from both, not a performance figure).
@Suite("client commands: failures that say what happened, fast (real gateway process, real TLS)", .serialized, .ownThreads)
struct ClientFailureEndToEndTests {
    static let certificates = try! TestCertificates.shared()
    /// Well under the 10 s timeout every case used to wait.
    static let fast: Duration = .seconds(3)

    /// Runs a client command and checks the exit code, the message, that it was fast, and that no Swift type name
    /// leaked into what the user reads.
    func expectFailure(
        _ arguments: [String],
        code expected: Int32,
        message: String,
        environment: [String: String] = [:],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let run = try runCLI(arguments, environment: environment)
        let (code, stderr, elapsed) = (run.code, run.stderr, run.elapsed)
        #expect(code == expected, "exit code for \(arguments.prefix(1)): \(stderr)", sourceLocation: sourceLocation)
        #expect(stderr.contains(message), "expected '\(message)' in: \(stderr)", sourceLocation: sourceLocation)
        #expect(elapsed < Self.fast, "took \(elapsed): \(stderr)", sourceLocation: sourceLocation)
        for typeName in ["StoreError", "RouteError", "TLSError", "TransportError", "IOError", "ClientError", "FrameError"] {
            #expect(!stderr.contains(typeName), "internal type name \(typeName) in: \(stderr)", sourceLocation: sourceLocation)
        }
    }

    @Test("a refused port and an unresolvable host fail at once: connection refused, host not found (exit 3)")
    func unreachable() throws {
        let closed = try BoundPort()
        let publish = ["publish", "--order", "u1", "--state", "created", "--token", "x"]
        try expectFailure(publish + ["--server", "127.0.0.1:\(closed.port)"], code: 3, message: "connection refused by 127.0.0.1:\(closed.port)")
        try expectFailure(publish + ["--server", "no-such-host.invalid:7070"], code: 3, message: "host not found: no-such-host.invalid")
        try expectFailure(
            ["subscribe", "order://taxi/1", "--server", "127.0.0.1:\(closed.port)", "--duration", "8s"],
            code: 3,
            message: "connection refused"
        )
    }

    @Test("TLS and protocol mismatches fail at once: certificate verify failed, not a TLS endpoint, not a Longlink endpoint (exit 4)")
    func wrongEndpoint() throws {
        let gateway = try SecuredServeProcess(Self.certificates)
        defer { gateway.stop() }
        let environment = ["LONGLINK_TOKEN": try gateway.token(sub: "backend", role: "publisher")]
        let publish = ["publish", "--order", "t1", "--state", "created"]
        // The test CA is not in the system store.
        try expectFailure(
            publish + ["--server", gateway.tls, "--tls"],
            code: 4,
            message: "TLS: certificate verify failed: not issued by a trusted CA",
            environment: environment
        )
        try expectFailure(
            publish + ["--server", gateway.tls, "--ca-file", Self.certificates.caFile, "--server-name", "wrong.example"],
            code: 4,
            message: "TLS: certificate verify failed: certificate is for another host name",
            environment: environment
        )
        // A plain client on the TLS port, a TLS client on the plain port.
        try expectFailure(publish + ["--server", gateway.tls], code: 4, message: "not a Longlink endpoint", environment: environment)
        try expectFailure(
            publish + ["--server", gateway.plain, "--ca-file", Self.certificates.caFile],
            code: 4,
            message: "TLS: not a TLS endpoint",
            environment: environment
        )
        try expectFailure(
            publish + ["--server", gateway.tls, "--ca-file", "/nonexistent/ca.pem"],
            code: 2,
            message: "TLS: cannot load CA file /nonexistent/ca.pem",
            environment: environment
        )
        let good = try runCLI(publish + ["--server", gateway.tls, "--ca-file", Self.certificates.caFile], environment: environment)
        #expect(good.code == 0, "\(good.stderr)")
    }

    @Test("a bad token fails at once with invalid token; an expired one with token expired, and is not retried (exit 5)")
    func refusedTokens() async throws {
        let gateway = try SecuredServeProcess(Self.certificates)
        defer { gateway.stop() }
        try expectFailure(
            ["publish", "--order", "a1", "--state", "created", "--server", gateway.plain, "--token", "not-a-jwt"],
            code: 5,
            message: "invalid token"
        )
        let expiring = try gateway.token(ttl: "1s")
        try await Task.sleep(for: .milliseconds(2_100))
        try expectFailure(
            ["subscribe", "order://taxi/a1", "--server", gateway.plain, "--duration", "8s"],
            code: 5,
            message: "token expired",
            environment: ["LONGLINK_TOKEN": expiring]
        )
        try expectFailure(
            ["publish", "--order", "a1", "--state", "created", "--server", gateway.plain],
            code: 5,
            message: "token expired",
            environment: ["LONGLINK_TOKEN": expiring]
        )
        // One refused connect per command: the token was not tried again.
        #expect(try gateway.metric(#"longlink_disconnects_total{code="3006""#) == 2)
        #expect(try gateway.metric(#"longlink_disconnects_total{code="3500""#) == 1)
    }

    @Test("subscribe to a route the token does not cover, or to an unknown line, exits non-zero at once")
    func refusedSubscribes() throws {
        let gateway = try SecuredServeProcess(Self.certificates)
        defer { gateway.stop() }
        let rider = try gateway.token(routes: "order://taxi/42")
        try expectFailure(
            ["subscribe", "order://taxi/43", "--server", gateway.plain, "--token", rider, "--duration", "8s"],
            code: 1,
            message: "cannot subscribe to order://taxi/43: permission_denied(403)"
        )
        let everything = try gateway.token(routes: "*")
        try expectFailure(
            ["subscribe", "order://bus/1", "--server", gateway.plain, "--token", everything, "--duration", "8s"],
            code: 1,
            message: "cannot subscribe to order://bus/1: unknown_line(405): unknown business line 'bus'"
        )
        try expectFailure(
            ["subscribe", "order:/taxi", "--server", gateway.plain, "--token", everything],
            code: 2,
            message: "'order:/taxi' has no scheme"
        )
        // The covered route still works, and the count ends it.
        let publisher = try gateway.token(sub: "backend", role: "publisher")
        let published = try runCLI(["publish", "--order", "42", "--state", "created", "--server", gateway.plain, "--token", publisher])
        #expect(published.code == 0, "\(published.stderr)")
        let followed = try runCLI([
            "subscribe", "order://taxi/42", "--server", gateway.plain, "--token", rider, "--count", "1", "--duration", "8s",
        ])
        #expect(followed.code == 0, "\(followed.stderr)")
        #expect(followed.stdout.contains("snapshot state=created"))
    }

    @Test("an unknown state is unknown_state; a reused idempotency key with another change is refused as a conflict")
    func refusedPublishes() throws {
        let gateway = try SecuredServeProcess(Self.certificates)
        defer { gateway.stop() }
        let environment = ["LONGLINK_TOKEN": try gateway.token(sub: "backend", role: "publisher")]
        let publish = ["publish", "--server", gateway.plain, "--order", "k1"]
        try expectFailure(
            publish + ["--state", "teleported"],
            code: 1,
            message: "refused: unknown_state(408): 'teleported' is not a state of line taxi",
            environment: environment
        )
        let first = try runCLI(publish + ["--state", "created", "--idempotency-key", "key-1"], environment: environment)
        #expect(first.code == 0, "\(first.stderr)")
        try expectFailure(
            publish + ["--state", "dispatching", "--idempotency-key", "key-1"],
            code: 1,
            message: "refused: idempotency_conflict(414): idempotency key 'key-1' was already used on order://taxi/k1",
            environment: environment
        )
        let replay = try runCLI(publish + ["--state", "created", "--idempotency-key", "key-1"], environment: environment)
        #expect(replay.code == 0, "\(replay.stderr)")
        #expect(replay.stdout.contains("(duplicate key: first result)"))
        // The refused change was not stored.
        let shown = try runCLI(["orders", "show", "k1", "--server", gateway.plain], environment: environment)
        #expect(shown.code == 0, "\(shown.stderr)")
        #expect(shown.stdout.contains("snapshot state=created"))
        #expect(!shown.stdout.contains("dispatching"))
    }

    @Test("extra positional arguments are a usage error, before anything connects")
    func extraArguments() throws {
        let closed = try BoundPort()
        let server = ["--server", "127.0.0.1:\(closed.port)", "--timeout", "1s"]
        try expectFailure(
            ["publish", "--order", "1", "--state", "created", "dispatching"] + server,
            code: 2,
            message: "unexpected argument 'dispatching'"
        )
        try expectFailure(["simulate", "extra"] + server, code: 2, message: "unexpected argument 'extra'")
        try expectFailure(["token", "--sub", "a", "extra"], code: 2, message: "unexpected argument 'extra'")
        try expectFailure(["orders", "show", "1", "2"] + server, code: 2, message: "unexpected argument '2'")
        // (An unknown store too, so that a serve which ignored the argument would still exit instead of serving.)
        try expectFailure(["serve", "now", "--store", "postgres://nowhere"], code: 2, message: "unexpected argument 'now'")
    }
}
