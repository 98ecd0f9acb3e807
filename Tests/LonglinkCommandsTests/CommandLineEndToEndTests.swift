import Foundation
import LonglinkCommands
import LonglinkCore
import LonglinkSQLite
import LonglinkTestSupport
import Testing

/// The `longlink` executable built next to this test binary.
func longlinkExecutable() -> String? {
    var candidates: [String] = []
    if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
        candidates.append((executable as NSString).deletingLastPathComponent + "/longlink")
    }
    let package = ((("\(#filePath)" as NSString).deletingLastPathComponent as NSString).deletingLastPathComponent as NSString)
        .deletingLastPathComponent
    candidates.append(package + "/.build/debug/longlink")
    return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
}

/// A temporary directory removed at the end of the test.
final class TemporaryDirectory {
    let path: String
    init() throws {
        path = NSTemporaryDirectory() + "longlink-cli-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// `longlink serve` as a child process on free ports (client and operations listeners both on port 0, so a gateway
/// serving on the defaults meanwhile does not matter), its stderr in a file.
final class ServerProcess {
    let output = OutputCollector()
    let process: ChildProcess
    private(set) var port = 0

    init(_ arguments: [String]) throws {
        let binary = try #require(longlinkExecutable(), "longlink is not built")
        let operations = arguments.contains("--metrics-listen") ? [] : ["--metrics-listen", "127.0.0.1:0"]
        process = try ChildProcess(binary, ["serve", "--listen", "127.0.0.1:0"] + operations + arguments, standardError: output.path)
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline && port == 0 && process.isRunning {
            let text = output.text
            if let range = text.range(of: #"serving on 127\.0\.0\.1:(\d+)"#, options: .regularExpression) {
                port = Int(text[range].split(separator: ":").last!)!
            } else {
                usleep(10_000)
            }
        }
    }

    /// What it wrote to stderr so far.
    var log: String { output.text }

    /// SIGTERM, then the exit status (nil if it did not exit in time; then it is killed).
    func terminate(timeout: TimeInterval = 20) -> Int32? {
        process.terminate(timeout: .milliseconds(Int(timeout * 1000)))?.shellStatus
    }
}

func run(_ arguments: [String]) async -> (Int32, CommandIO) {
    let io = CommandIO.capturing()
    let code = await LonglinkCLI.main(arguments: arguments, environment: [:], io: io)
    return (code, io)
}

@Suite("longlink commands end to end", .serialized, .ownThreads)
struct CommandLineEndToEndTests {
    /// Mints a token with `longlink token` and the test's secret file.
    func token(_ secretFile: String, sub: String, role: String, routes: String = "*") async throws -> String {
        let (code, io) = await run([
            "token", "--secret-file", secretFile, "--sub", sub, "--role", role, "--routes", routes, "--ttl", "10m",
        ])
        try #require(code == 0, "token: \(io.capturedErr)")
        return io.capturedOut.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("serve, publish, subscribe, orders show, simulate with real tokens; SIGTERM drains and exits 0")
    func serveAndClients() async throws {
        let directory = try TemporaryDirectory()
        let secretFile = "\(directory.path)/secret"
        try String(repeating: "s3cr3t-", count: 8).write(toFile: secretFile, atomically: true, encoding: .utf8)
        let server = try ServerProcess([
            "--store", "sqlite:\(directory.path)/orders.sqlite", "--drain-period", "500ms", "--secret-file", secretFile,
        ])
        try #require(server.port > 0, "server did not start")
        let address = "127.0.0.1:\(server.port)"
        let publisher = try await token(secretFile, sub: "backend", role: "publisher")
        let rider = try await token(secretFile, sub: "rider-1", role: "subscriber", routes: "order://taxi/42")

        // The rider follows the order from before it exists: the three changes below are pushed to it, once its
        // subscribe was answered (it says so on stderr).
        let subscribeIO = CommandIO.capturing()
        async let subscribeCode = LonglinkCLI.main(
            arguments: ["subscribe", "order://taxi/42", "--server", address, "--count", "3", "--json", "--duration", "120s", "--token", rider],
            environment: [:], io: subscribeIO
        )
        let active = await eventually(timeout: .seconds(60)) { subscribeIO.capturedErr.contains("subscribed to order://taxi/42") }
        try #require(active, "the rider's subscription never became active: \(subscribeIO.capturedErr)")
        let (denied, deniedIO) = await run([
            "subscribe", "order://taxi/43", "--server", address, "--count", "1", "--duration", "1s", "--token", rider,
        ])
        #expect(denied != 0)
        #expect(deniedIO.capturedErr.contains("permission_denied(403)"))
        let (notPublisher, notPublisherIO) = await run(["publish", "--order", "42", "--state", "created", "--server", address, "--token", rider])
        #expect(notPublisher == 1)
        #expect(notPublisherIO.capturedErr.contains("permission_denied(403)"))
        for state in ["created", "dispatching"] {
            let (code, io) = await run(["publish", "--order", "42", "--line", "taxi", "--state", state, "--server", address, "--token", publisher])
            #expect(code == 0, "\(io.capturedErr)")
            #expect(io.capturedOut.contains("stored order://taxi/42 at "))
        }
        let (assigned, _) = await run([
            "publish", "--order", "42", "--state", "driver_assigned", "--driver", "d-7", "--eta", "180", "--server", address,
            "--token", publisher,
        ])
        #expect(assigned == 0)
        let (illegal, illegalIO) = await run(["publish", "--order", "42", "--state", "paid", "--server", address, "--token", publisher])
        #expect(illegal == 1)
        #expect(illegalIO.capturedErr.contains("illegal_transition(409)"))
        let (missingState, _) = await run(["publish", "--order", "42", "--server", address, "--token", publisher])
        #expect(missingState == 2)

        #expect(await subscribeCode == 0, "\(subscribeIO.capturedErr)")
        let lines = subscribeIO.capturedOut.split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines.last?.contains("\"to\":\"driver_assigned\"") == true)
        #expect(lines.last?.contains("\"driver_id\":\"d-7\"") == true)

        let (showCode, showIO) = await run(["orders", "show", "42", "--line", "taxi", "--server", address, "--token", rider])
        #expect(showCode == 0)
        #expect(showIO.capturedOut.contains("snapshot state=driver_assigned driver=d-7 eta=180s"))
        #expect(showIO.capturedOut.contains("created → dispatching"))

        let (simulateCode, simulateIO) = await run([
            "simulate", "--orders", "30", "--rate", "0", "--seed", "7", "--server", address, "--token", publisher,
        ])
        #expect(simulateCode == 0, "\(simulateIO.capturedErr)")
        #expect(simulateIO.capturedOut.contains("0 refused, 0 failed"))

        #expect(server.terminate() == 0)
        // The freed port may be bound again by a parallel suite at once: aim at a port this test holds bound
        // without listening, which refuses connections and nobody else can take.
        let closedPort = try BoundPort()
        let (unreachable, unreachableIO) = await run([
            "publish", "--order", "1", "--state", "created", "--server", "127.0.0.1:\(closedPort.port)", "--timeout", "1s",
        ])
        #expect(unreachable == 3)
        #expect(!unreachableIO.capturedErr.isEmpty)
    }

    @Test("migrate copies SQLite to SQLite, is a no-op the second time, and --verify finds a planted difference")
    func migrate() async throws {
        let directory = try TemporaryDirectory()
        let sourcePath = "\(directory.path)/source.sqlite"
        let targetPath = "\(directory.path)/target.sqlite"
        let source = try SQLiteOrderStore(path: sourcePath)
        var simulator = RideSimulator(orders: 40, seed: 3)
        var applied = 0
        while let change = simulator.next() {
            _ = try source.apply(change)
            applied += 1
        }
        source.shutdown()
        #expect(applied > 40)

        let (first, firstIO) = await run(["migrate", "--from", "sqlite:\(sourcePath)", "--to", "sqlite:\(targetPath)", "--verify"])
        #expect(first == 0, "\(firstIO.capturedErr)")
        #expect(firstIO.capturedOut.contains("copied 40 orders"))
        #expect(firstIO.capturedOut.contains("verified 40 orders: identical"))

        let (second, secondIO) = await run(["migrate", "--from", "sqlite:\(sourcePath)", "--to", "sqlite:\(targetPath)", "--verify"])
        #expect(second == 0)
        #expect(secondIO.capturedOut.contains("copied 0 orders, skipped 40 already identical"))

        // Plant a divergence in the target: one more change on one order.
        let target = try SQLiteOrderStore(path: targetPath)
        let extra = OrderChange(orderID: OrderID("planted")!, line: .taxi, targetState: "created")
        _ = try target.apply(extra)
        target.shutdown()
        let (verify, verifyIO) = await run(["migrate", "--from", "sqlite:\(sourcePath)", "--to", "sqlite:\(targetPath)", "--verify-only"])
        #expect(verify == 1)
        #expect(verifyIO.capturedErr.contains("taxi/planted"))

        let (refused, refusedIO) = await run(["migrate", "--from", "sqlite:\(sourcePath)", "--to", "sqlite:\(targetPath)"])
        #expect(refused == 1)
        #expect(refusedIO.capturedErr.contains("nothing was written"))

        let (same, _) = await run(["migrate", "--from", "memory", "--to", "memory"])
        #expect(same == 2)
        let (bad, badIO) = await run(["migrate", "--from", "mysql://x", "--to", "memory"])
        #expect(bad == 2)
        #expect(badIO.capturedErr.contains("--from"))
    }

    @Test("serve refuses an unknown store toggle instead of falling back")
    func unknownStore() async throws {
        let (code, io) = await run(["serve", "--store", "postgres://db", "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", "--insecure-dev"])
        #expect(code == 2)
        #expect(io.capturedErr.contains("postgres://db"))
    }
}
