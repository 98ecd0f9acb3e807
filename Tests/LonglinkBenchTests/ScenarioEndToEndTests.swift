import LonglinkBench
import LonglinkCommands
import LonglinkTestSupport
import Testing

extension BenchEndToEnd {
    @Suite("bench scenarios end to end", .ownThreads)
    struct ScenarioEndToEndTests {
        @Test("connect opens every connection and reports its latency")
        func connect() async throws {
            let gateway = try TestGateway()
            let (code, report, io) = try await runBench(["connect", "--server", gateway.server, "--connections", "120", "--timeout", "20s"])
            #expect(code == 0, "\(io.capturedErr)")
            let run = try #require(runs(report).first)
            #expect(figure(run, "connected") == 120)
            #expect(figure(run, "failed") == 0)
            #expect((figure(run, "connections_per_second") ?? 0) > 0)
            let latency = try #require(run["connectLatency"] as? [String: Any])
            #expect(latency["count"] as? Int == 120)
        }

        @Test("connect to a port nobody listens on counts failures by reason instead of hanging")
        func connectRefused() async throws {
            let port: Int
            do {
                let gateway = try TestGateway()
                port = gateway.port
            }
            let (code, report, io) = try await runBench(["connect", "--server", "127.0.0.1:\(port)", "--connections", "5", "--timeout", "5s"])
            #expect(code == 0, "\(io.capturedErr)")
            let run = try #require(runs(report).first)
            #expect(figure(run, "connected") == 0)
            #expect(figure(run, "failed") == 5)
            let failures = try #require(run["failures"] as? [String: Int])
            #expect(failures.keys.contains { $0.contains("connect") })
        }

        @Test("idle measures the server's memory per connection, against Redis too")
        func idle() async throws {
            let gateway = try TestGateway()
            let redis = try RedisServer()
            defer { redis.stop() }
            // With --server the gateway's pid is unknown (no server figures for it); redis-server's comes from INFO.
            let (code, report, io) = try await runBench([
                "idle", "--server", gateway.server, "--connections", "100", "--routes", "10", "--duration", "1s",
                "--against", redis.url,
            ])
            #expect(code == 0, "\(io.capturedErr)")
            let all = runs(report)
            #expect(all.map { $0["system"] as? String } == ["longlink", "redis"])
            #expect(figure(all[0], "subscribed") == 100)
            #expect(figure(all[0], "open_after_idle") == 100)
            #expect(figure(all[1], "subscribed") == 100)
            #expect(figure(all[1], "server_bytes_per_connection") != nil, "redis-server's pid comes from INFO")
        }

        @Test("idle without --server reads the gateway child's RSS and checks the memory target")
        func idleOwnGateway() throws {
            let executable = try #require(longlinkExecutable())
            let report = try LonglinkBench.run(
                BenchParameters(scenario: .idle, connections: 200, duration: 1, timeout: 20),
                command: "test",
                executable: executable
            )
            let run = try #require(report.runs.first)
            #expect(run.figure("subscribed") == 200)
            #expect((run.figure("server_rss_loaded_bytes") ?? 0) > 0)
            #expect(run.figure("server_bytes_per_connection") != nil)
            #expect(report.targets.count == 1)
        }

        @Test("storm cuts every subscriber, all resume, nothing is lost or duplicated")
        func storm() async throws {
            let gateway = try TestGateway()
            let (code, report, io) = try await runBench([
                "storm", "--server", gateway.server, "--subscribers", "80", "--routes", "20", "--rate", "300",
                "--messages", "100000", "--duration", "3s", "--timeout", "20s",
            ])
            #expect(code == 0, "\(io.capturedErr)")
            let run = try #require(runs(report).first)
            #expect(figure(run, "cut_connections") == 80)
            #expect(figure(run, "resubscribed") == 80)
            #expect((figure(run, "recovery_seconds") ?? -1) >= 0)
            #expect(figure(run, "lost") == 0)
            #expect(figure(run, "duplicates") == 0)
            #expect(figure(run, "resumes_not_recovered") == 0)
            #expect((figure(run, "deliveries") ?? 0) > 0)
        }

        @Test("churn runs the fan-out quiet and with connections coming and going; both deliver everything")
        func churn() async throws {
            let gateway = try TestGateway()
            let (code, report, io) = try await runBench([
                "churn", "--server", gateway.server, "--subscribers", "40", "--routes", "10", "--messages", "300",
                "--rate", "300", "--churn-rate", "100", "--timeout", "20s",
            ])
            #expect(code == 0, "\(io.capturedErr)")
            let all = runs(report)
            #expect(all.count == 2)
            for run in all {
                #expect(figure(run, "deliveries") == 1_200)
                #expect(figure(run, "lost") == 0)
            }
            #expect((figure(all[1], "churn_connected") ?? 0) > 0)
            #expect(figure(all[1], "churn_failed") == 0)
        }

        @Test("orders walks lifecycles; riders and drivers follow to the next order and miss nothing")
        func orders() async throws {
            let gateway = try TestGateway()
            let (code, report, io) = try await runBench([
                "orders", "--server", gateway.server, "--routes", "10", "--messages", "200", "--rate", "500", "--timeout", "20s",
            ])
            #expect(code == 0, "\(io.capturedErr)")
            let run = try #require(runs(report).first)
            #expect(figure(run, "subscribers") == 20)
            #expect(figure(run, "acknowledged") == 200)
            #expect(figure(run, "refused") == 0)
            #expect(figure(run, "lost") == 0)
            #expect(figure(run, "duplicates") == 0)
            // 200 changes over 10 orders: 20 steps each, so every slot finished two lifecycles and moved on.
            #expect((figure(run, "deliveries") ?? 0) + (figure(run, "covered_by_snapshot") ?? 0) == 400)
        }
    }
}
