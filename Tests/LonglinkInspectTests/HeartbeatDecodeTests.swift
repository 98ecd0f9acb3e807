import LonglinkTestSupport
import LonglinkInspect
import Testing

/// `inspect decode` shows the smart-heartbeat fields: the client's proposal and request, the server's bounds.
@Suite("inspect decode: heartbeat intervals", .ownThreads)
struct HeartbeatDecodeTests {
    func decode(_ fixture: String, direction: String, _ options: [String] = []) async throws -> [String] {
        let scratch = try ScratchDirectory()
        defer { scratch.cleanup() }
        let file = try scratch.write("frame.bin", try Fixtures.frame(fixture))
        let result = await runCLI(["inspect", "decode", "--direction", direction, file] + options)
        #expect(result.code == 0, "\(result.err)")
        return result.lines
    }

    @Test("heartbeat request, connect's proposal and connected's bounds are printed")
    func printed() async throws {
        let heartbeat = try await decode("client_heartbeat", direction: "client")
        #expect(heartbeat.count == 1 && heartbeat[0].contains("client heartbeat") && heartbeat[0].contains("ping=55000ms"), "\(heartbeat)")
        let connect = try await decode("client_connect_ping_interval", direction: "client")
        #expect(connect.count == 1 && connect[0].contains("ping=120000ms"), "\(connect)")
        let connected = try await decode("server_connected_ping_bounds", direction: "server")
        #expect(connected.count == 1 && connected[0].contains("ping_min=10000ms ping_max=300000ms"), "\(connected)")
        let json = try await decode("server_connected_ping_bounds", direction: "server", ["--json"])
        #expect(json.count == 1 && json[0].contains("\"max_ping_interval_ms\":300000"), "\(json)")
    }
}
