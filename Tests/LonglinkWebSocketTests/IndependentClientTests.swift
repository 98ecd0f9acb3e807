import Foundation
import LonglinkTestSupport
import Testing

/// The happy paths with a WebSocket implementation that is not ours: Debian's `python3-websockets` (asyncio,
/// RFC 6455 client) over `ws` and `wss`, against a real gateway process.
@Suite("an independent client (python3-websockets) over ws and wss", .serialized, .ownThreads)
struct IndependentClientTests {
    static let python = "/usr/bin/python3"
    static var script: String { GatewayProcess.packageRoot + "/Tests/LonglinkWebSocketTests/Scripts/websockets_client.py" }

    /// Runs the script against `url`; returns its JSON events by name.
    static func run(_ url: String, route: String, extra: [String] = []) throws -> [String: [String: Any]] {
        let output = try ProcessRunner.run([python, script, url, route] + extra, timeout: .seconds(60))
        #expect(output.status == 0, "\(output.text)")
        var events: [String: [String: Any]] = [:]
        for line in output.stdout.split(separator: UInt8(ascii: "\n")) {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
                let name = object["event"] as? String
            else { continue }
            events[name] = object
        }
        return events
    }

    static func check(_ events: [String: [String: Any]], transport: String) {
        #expect(events["refused"]?["status"] as? Int == 400, "\(transport): a client offering no sub-protocol is refused")
        #expect(events["open"]?["subprotocol"] as? String == "longlink.v1.protobuf", "\(transport)")
        #expect((events["connected"]?["client_id"] as? String)?.hasPrefix("c") == true, "\(transport)")
        #expect(events["subscribed"] != nil, "\(transport)")
        #expect(events["pushes"]?["states"] as? [String] == ["created", "dispatching", "no_driver_timeout"], "\(transport): \(events)")
        #expect(events["pushes"]?["publish_results"] as? Int == 3, "\(transport)")
        #expect(events["fragmented-pings-answered"]?["pongs"] as? Int == 200, "\(transport)")
        #expect(events["pong"] != nil, "\(transport)")
        #expect(events["closed"]?["code"] as? Int == 1000, "\(transport): \(events)")
    }

    @Test("python3-websockets upgrades, subscribes, publishes, pings and closes over ws")
    func plain() throws {
        let gateway = try GatewayProcess()
        let events = try Self.run("ws://127.0.0.1:\(gateway.webSocketPort)/longlink", route: "order://taxi/py1")
        Self.check(events, transport: "ws")
        #expect(gateway.isRunning)
    }

    @Test("python3-websockets does the same over wss, verifying the gateway's certificate against a test CA")
    func secure() throws {
        let certificates = try TestCertificates()
        let gateway = try GatewayProcess(certificates: certificates)
        let events = try Self.run(
            "wss://localhost:\(gateway.secureWebSocketPort)/longlink",
            route: "order://taxi/py2",
            extra: ["--ca", certificates.caFile]
        )
        Self.check(events, transport: "wss")
        let metrics = try gateway.admin("GET", "/metrics").text
        #expect(metrics.contains(#"longlink_connections{transport="wss"} 0"#))
    }
}
