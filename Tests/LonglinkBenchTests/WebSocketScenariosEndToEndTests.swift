import LonglinkBench
import LonglinkTestSupport
import Testing

extension BenchEndToEnd {
    @Suite("bench --transport ws: each scenario over raw TCP, then over WebSocket on the same gateway", .ownThreads)
    struct WebSocketScenariosEndToEndTests {
        static func parameters(_ scenario: BenchParameters.Scenario, tls: Bool = false) -> BenchParameters {
            var parameters = BenchParameters(
                scenario: scenario, subscribers: 30, routes: 6, messages: 300, connections: 40, duration: 1, timeout: 20, tls: tls
            )
            parameters.transport = .ws
            return parameters
        }

        @Test("fanout: the WebSocket run delivers every record, nothing lost or duplicated, with its ratio to TCP", arguments: [false, true])
        func fanout(tls: Bool) throws {
            let executable = try #require(longlinkExecutable())
            let report = try LonglinkBench.run(Self.parameters(.fanout, tls: tls), command: "test", executable: executable)
            #expect(report.runs.count == 2)
            let (tcp, ws) = (report.runs[0], report.runs[1])
            #expect(!tcp.label.contains("WebSocket"))
            #expect(ws.label.hasSuffix(tls ? "over WebSocket+TLS" : "over WebSocket"), "\(ws.label)")
            for run in [tcp, ws] {
                #expect(run.figure("subscribed") == 30, "\(run.label): \(run.failures)")
                #expect(run.figure("deliveries") == 1_500, "\(run.label)")
                #expect(run.figure("lost") == 0)
                #expect(run.figure("duplicates") == 0)
                #expect(run.failures.isEmpty, "\(run.failures)")
            }
            #expect((ws.figure("deliveries_per_second_ratio_to_tcp") ?? 0) > 0)
            #expect(report.targets.contains { $0.target.contains("WebSocket deliveries/s") })
        }

        @Test("connect and idle: a WebSocket run beside the TCP run, with its ratio or its extra bytes per connection")
        func connectAndIdle() throws {
            let executable = try #require(longlinkExecutable())
            let connect = try LonglinkBench.run(Self.parameters(.connect), command: "test", executable: executable)
            #expect(connect.runs.map { $0.figure("connected") } == [40, 40], "\(connect.runs.map(\.failures))")
            #expect(connect.runs[1].label.hasSuffix("over WebSocket"))
            #expect(connect.runs[1].figure("connections_per_second_ratio_to_tcp") != nil)
            let idle = try LonglinkBench.run(Self.parameters(.idle), command: "test", executable: executable)
            #expect(idle.runs.map { $0.figure("open_after_idle") } == [40, 40], "\(idle.runs.map(\.failures))")
            #expect(idle.runs[1].figure("server_extra_bytes_per_connection") != nil)
            #expect(idle.targets.contains { $0.target.contains("WebSocket idle") })
        }

        @Test("--transport ws is refused where it does not apply")
        func validation() {
            var storm = Self.parameters(.storm)
            storm.transport = .ws
            #expect(throws: BenchError.self) { try storm.validate() }
            var remote = Self.parameters(.fanout)
            remote.server = "127.0.0.1:7070"
            #expect(throws: BenchError.self) { try remote.validate() }
            remote.webSocketServer = "127.0.0.1:7071"
            #expect(throws: Never.self) { try remote.validate() }
        }
    }
}
