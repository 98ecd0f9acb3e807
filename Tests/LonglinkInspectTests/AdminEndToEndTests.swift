import LonglinkTestSupport
import Foundation
import Glibc
import LonglinkClient
import LonglinkCore
import LonglinkInspect
import Testing

/// `inspect tap` and `inspect connections` against a real `longlink serve` with its admin listener
/// (`--metrics-listen`, built on the ops branch). Until that branch is merged, serve does not know the option
/// (or the endpoint answers 404) and these tests are cancelled with that reason; remove the guard after merging.
@Suite("inspect tap and connections (against a gateway)", .serialized, .ownThreads)
struct AdminEndToEndTests {
    /// A `longlink serve` child with a client port and an admin port.
    final class Gateway {
        let process: ChildProcess
        private(set) var port = 0
        private(set) var adminPort = 0
        let scratch: ScratchDirectory

        /// Starts serve on port 0 for both listeners and reads the ports it bound from its log (a port picked
        /// free beforehand can be taken by a parallel suite before the child binds it).
        init() async throws {
            scratch = try ScratchDirectory()
            let binary = try #require(Self.longlinkPath(), "the longlink executable is not built; run `swift build`")
            process = try ChildProcess(
                binary,
                ["serve", "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", "--store", "memory",
                 "--loops", "1", "--insecure-dev"],
                standardOutput: scratch.file("serve.out"), standardError: scratch.file("serve.err"))
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline && (port == 0 || adminPort == 0) && process.isRunning {
                let text = log + ((try? String(contentsOfFile: scratch.file("serve.out"), encoding: .utf8)) ?? "")
                port = Self.port(after: "serving on 127.0.0.1:", in: text) ?? 0
                adminPort = Self.port(after: "operations listener on 127.0.0.1:", in: text) ?? 0
                if port == 0 || adminPort == 0 { try await Task.sleep(for: .milliseconds(20)) }
            }
        }

        /// The digits right after `marker` in `text`.
        static func port(after marker: String, in text: String) -> Int? {
            guard let range = text.range(of: marker) else { return nil }
            return Int(String(text[range.upperBound...].prefix { $0.isNumber }))
        }

        deinit {
            _ = process.terminate(timeout: .seconds(10))  // SIGTERM, then SIGKILL after 10 s
            scratch.cleanup()
        }

        var log: String { ((try? String(contentsOfFile: scratch.file("serve.err"), encoding: .utf8)) ?? "") }

        /// Waits for the admin endpoint; cancels the test when this gateway has none.
        func requireAdmin() async throws {
            let client = AdminHTTPClient(host: "127.0.0.1", port: adminPort, token: "dev", connectTimeout: .seconds(1))
            var lastError = ""
            let deadline = ContinuousClock.now + .seconds(15)
            while ContinuousClock.now < deadline {
                guard process.isRunning else {
                    Issue.record("longlink serve exited: \(log)")
                    return
                }
                do throws(AdminError) {
                    _ = try client.get("/admin/connections")
                    return
                } catch {
                    lastError = error.message
                }
                try await Task.sleep(for: .milliseconds(50))
            }
            Issue.record("the admin listener never answered: \(lastError)\n\(log)")
        }

        static func longlinkPath() -> String? {
            var candidates: [String] = []
            if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
                candidates.append(URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent("longlink").path)
            }
            candidates.append("\(packageRoot)/.build/debug/longlink")
            return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
        }
    }

    @Test("inspect connections lists a subscribed client with its subscription")
    func connections() async throws {
        let gateway = try await Gateway()
        try await gateway.requireAdmin()
        let client = try LonglinkClient(configuration: ClientConfiguration(host: "127.0.0.1", port: gateway.port, connectTimeout: .seconds(5)))
        defer { client.close() }
        let route = Route.order(.taxi, OrderID("4242")!)
        let stream = client.changes(of: route)
        _ = stream
        try await client.waitUntilConnected(timeout: .seconds(10))
        // The client's subscription reaches the gateway shortly after it connects: poll, bounded.
        var rows: [String] = []
        let deadline = ContinuousClock.now + .seconds(15)
        while ContinuousClock.now < deadline {
            rows = await runCLI(["inspect", "connections", "--server", "127.0.0.1:\(gateway.adminPort)",
                                 "--filter", "order://taxi/4242", "--json"], environment: ["LONGLINK_TOKEN": "dev"]).lines
            if rows.count == 1 { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        let listed = rows.count == 1
        #expect(listed, "\(rows)")
        #expect(rows.first?.contains("\"subscriptions\":[\"order://taxi/4242\"]") == true)
        #expect(rows.first?.contains("\"tls\":false") == true)
        let table = await runCLI(["inspect", "connections", "--server", "127.0.0.1:\(gateway.adminPort)", "--sort", "-idle"],
                                 environment: ["LONGLINK_TOKEN": "dev"])
        #expect(table.code == 0)
        #expect(table.lines.first?.hasPrefix("ID ") == true)
        #expect(table.lines.contains { $0.contains("order://taxi/4242") })
    }

    @Test("inspect tap follows records published to the gateway, filtered by route")
    func tap() async throws {
        let gateway = try await Gateway()
        try await gateway.requireAdmin()
        let server = "127.0.0.1:\(gateway.port)"
        let done = Mutex2(false)
        let tap = Task {
            let result = await runCLI(["inspect", "tap", "--server", "127.0.0.1:\(gateway.adminPort)", "--route", "order://taxi/*",
                                       "--count", "2", "--duration", "120s"], environment: ["LONGLINK_TOKEN": "dev"])
            done.update { $0 = true }
            return result
        }
        // Records published before the tap's request arrives are not followed: publish until two came through.
        let states = ["created", "dispatching", "driver_assigned"] + Array(repeating: ["dispatching", "driver_assigned"], count: 20).flatMap { $0 }
        var published = 0
        for state in states {
            let other = await runCLI(["publish", "--server", server, "--order", "tap-\(published)", "--line", "express", "--state", "created"])
            #expect(other.code == 0, "\(other.err)")
            let result = await runCLI(["publish", "--server", server, "--order", "tap-1", "--line", "taxi", "--state", state])
            #expect(result.code == 0, "\(result.err)")
            published += 1
            try await Task.sleep(for: .milliseconds(100))
            if done.value { break }
        }
        let result = await tap.value
        #expect(result.code == 0, "\(result.err)")
        #expect(result.lines.count == 2)
        #expect(result.lines.allSatisfy { $0.contains(" order://taxi/tap-1 ") && !$0.contains("\u{1B}[") })
    }
}

import Synchronization

/// A value shared between tasks and threads.
final class Mutex2<T: Sendable>: Sendable {
    private let storage: Mutex<T>
    init(_ value: T) { storage = Mutex(value) }
    var value: T { storage.withLock { $0 } }
    func update(_ body: (inout T) -> Void) { storage.withLock { body(&$0) } }
}
