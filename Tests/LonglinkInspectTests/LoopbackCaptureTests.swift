import LonglinkTestSupport
import Foundation
import Glibc
import LonglinkCommands
import LonglinkServer
import LonglinkGateway
import LonglinkInspect
import LonglinkStores
import Testing

/// `inspect pcap` on a real session: an in-process gateway, `longlink publish` and `longlink subscribe`, captured
/// on the loopback interface by tcpdump (started and stopped by PID). Without root or a working tcpdump, the
/// committed capture recorded the same way is decoded instead (Fixtures/README.md).
@Suite("inspect pcap (real loopback capture)", .ownThreads)
struct LoopbackCaptureTests {
    @Test("decodes a publish and a subscribe captured by tcpdump on lo")
    func realSession() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.cleanup() }
        let capture: String
        let port: Int
        if let recorded = try await Self.record(into: scratch) {
            (capture, port) = recorded
            if ProcessInfo.processInfo.environment["LONGLINK_INSPECT_RECORD_FIXTURE"] == "1" {
                let fixtures = "\(packageRoot)/Tests/LonglinkInspectTests/Fixtures"
                try? FileManager.default.removeItem(atPath: "\(fixtures)/loopback_session.pcap")
                try FileManager.default.copyItem(atPath: capture, toPath: "\(fixtures)/loopback_session.pcap")
                try "\(port)\n".write(toFile: "\(fixtures)/loopback_session.port", atomically: true, encoding: .utf8)
            }
        } else {
            capture = try Fixtures.url("loopback_session.pcap").path
            let text = try Fixtures.text("loopback_session.port")
            port = try #require(Int(text.trimmingCharacters(in: .whitespacesAndNewlines)))
        }
        await Self.check(capture: capture, port: port)
    }

    @Test("decodes the committed capture recorded the same way")
    func committedCapture() async throws {
        let text = try Fixtures.text("loopback_session.port")
        let port = try #require(Int(text.trimmingCharacters(in: .whitespacesAndNewlines)))
        await Self.check(capture: try Fixtures.url("loopback_session.pcap").path, port: port)
    }

    /// The session's frames, in both directions, with times, client addresses and a clean summary.
    static func check(capture: String, port: Int) async {
        let result = await runCLI(["inspect", "pcap", capture, "--port", String(port)])
        #expect(result.code == 0, "\(result.out)\n\(result.err)")
        let lines = result.lines
        // The memory store's epoch is random: positions are matched as `:offset`.
        func has(_ arrow: String, _ text: String, _ more: String = "") -> Bool {
            lines.contains { $0.contains(" 127.0.0.1:") && $0.contains(" \(arrow) \(text)") && (more.isEmpty || $0.contains(more)) }
        }
        #expect(has("→", "connect protocol=1 client=longlink-publish/"), "\(result.out)")
        #expect(has("→", "connect protocol=1 client=longlink-subscribe/"))
        #expect(has("←", "connected client_id="))
        #expect(has("→", "publish order://taxi/inspect-1 → created request="))
        #expect(has("←", "publish_result ", ":1 20") && has("←", "publish_result ", " request=1 accepted"))
        #expect(has("→", "subscribe order://taxi/inspect-1 request="))
        #expect(has("←", "subscribed order://taxi/inspect-1 ", ":1 request=1 recovered=no state=created updated="))
        #expect(has("→", "publish order://taxi/inspect-1 → dispatching request="))
        #expect(has("←", "push order://taxi/inspect-1 ", ":2 created → dispatching 20"))
        #expect(has("→", "ack order://taxi/inspect-1 offset=2"))
        #expect(lines.contains { $0.hasPrefix("summary: 3 connections, ") && $0.hasSuffix(" 0 malformed, 0 framing errors") })
        #expect(lines.filter { $0.contains(" closed (FIN)") }.count == 3)
        // Every frame line starts with an ISO 8601 time with milliseconds.
        let frameLines = lines.prefix { !$0.hasPrefix("summary:") }
        #expect(frameLines.count >= 12)
        #expect(frameLines.allSatisfy { $0.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z 127\.0\.0\.1:\d+ [→←] "#, options: .regularExpression) != nil })
    }

    /// Runs the session under tcpdump; nil when this process cannot capture (not root, no tcpdump, no lo).
    static func record(into scratch: ScratchDirectory) async throws -> (String, Int)? {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/tcpdump") else { return nil }
        let running = try RunningGateway.start(
            gateway: GatewayConfiguration(host: "127.0.0.1", port: 0, loopCount: 1, peer: PeerSettings(nodeID: "inspect-test"),
                                          drainPeriod: .milliseconds(200)),
            store: .memory)
        defer { running.drainAndStop() }
        let port = running.gateway.port
        let file = scratch.file("session.pcap")
        let log = scratch.file("tcpdump.log")
        let tcpdump = try ChildProcess(
            "/usr/bin/tcpdump", ["-i", "lo", "-U", "-n", "-s", "0", "-w", file, "tcp port \(port)"], standardError: log)
        defer { tcpdump.kill() }
        // tcpdump says "listening on lo" once the capture is armed.
        let armed = await eventually(timeout: .seconds(15)) {
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("listening on") || !tcpdump.isRunning
        }
        guard armed, tcpdump.isRunning else { return nil }
        let server = "127.0.0.1:\(port)"
        let created = await runCLI(["publish", "--server", server, "--order", "inspect-1", "--line", "taxi", "--state", "created"])
        #expect(created.code == 0, "\(created.err)")
        let subscriber = Task { await runCLI(["subscribe", "order://taxi/inspect-1", "--server", server, "--count", "2", "--duration", "60s"]) }
        // The subscription is active once its `subscribed` frame is in the capture.
        #expect(await eventually(timeout: .seconds(15)) { Self.kinds(in: file, port: port).contains("server subscribed") })
        let dispatching = await runCLI(["publish", "--server", server, "--order", "inspect-1", "--line", "taxi", "--state", "dispatching"])
        #expect(dispatching.code == 0, "\(dispatching.err)")
        let subscribed = await subscriber.value
        #expect(subscribed.code == 0, "\(subscribed.err)")
        // Wait until the three connections' closing packets are captured, then stop tcpdump by its PID.
        #expect(await eventually(timeout: .seconds(15)) { Self.closedConnections(in: file, port: port) == 3 })
        tcpdump.signal(SIGINT)
        #expect(await eventually(timeout: .seconds(15)) { !tcpdump.isRunning })
        print("inspect pcap test: recorded \(file) with tcpdump (pid \(tcpdump.pid)), gateway port \(port)")
        return (file, port)
    }

    static func analysis(of file: String, port: Int) -> CaptureAnalysis? {
        guard let data = FileManager.default.contents(atPath: file) else { return nil }
        return try? CaptureAnalysis(capture: Array(data), serverPort: UInt16(port), decoder: FrameStreamDecoder())
    }

    static func kinds(in file: String, port: Int) -> Set<String> {
        Set(analysis(of: file, port: port)?.tally.byKind.keys.map { $0 } ?? [])
    }

    static func closedConnections(in file: String, port: Int) -> Int {
        analysis(of: file, port: port)?.connections.filter { $0.ending == "FIN" }.count ?? 0
    }
}

