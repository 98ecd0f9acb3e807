import LonglinkBench
import LonglinkCommands
import LonglinkTestSupport
import Testing

extension BenchEndToEnd {
    @Suite("bench fanout end to end", .ownThreads)
    struct FanoutEndToEndTests {
        @Test("fanout against a real gateway and a real redis-server: every delivery arrives once, the ratio is printed")
        func fanoutWithRedisBaseline() async throws {
            let gateway = try TestGateway()
            let redis = try RedisServer()
            defer { redis.stop() }
            let (code, report, io) = try await runBench([
                "fanout", "--server", gateway.server, "--subscribers", "60", "--routes", "6", "--messages", "300",
                "--against", redis.url, "--duration", "20s", "--timeout", "20s",
            ])
            #expect(code == 0, "\(io.capturedErr)")
            let all = runs(report)
            #expect(all.map { $0["system"] as? String } == ["longlink", "redis"])
            for run in all {
                #expect(figure(run, "subscribed") == 60)
                #expect(figure(run, "acknowledged") == 300)
                #expect(figure(run, "expected_deliveries") == 3_000)
                #expect(figure(run, "deliveries") == 3_000, "\(run["system"] ?? "")")
                #expect(figure(run, "lost") == 0)
                #expect(figure(run, "duplicates") == 0)
                #expect(figure(run, "gaps") == 0)
                #expect((figure(run, "deliveries_per_second") ?? 0) > 0)
                // The server's CPU split per delivery (the gateway found by its port, redis by INFO) and the
                // load generator's own CPU.
                #expect((figure(run, "server_user_us_per_delivery") ?? -1) >= 0, "\(run["system"] ?? "")")
                #expect((figure(run, "server_system_us_per_delivery") ?? -1) >= 0, "\(run["system"] ?? "")")
                #expect((figure(run, "bench_cpu_us_per_delivery") ?? -1) >= 0)
                let latency = try #require(run["latency"] as? [String: Any])
                #expect(latency["count"] as? Int == 3_000)
            }
            let comparison = try #require(report["comparison"] as? [String: Any])
            #expect((comparison["ratio"] as? Double ?? 0) > 0)
            #expect((report["targets"] as? [[String: Any]])?.isEmpty == false)
        }

        @Test(
            "fanout with each --reader: every delivery arrives once through io_uring as through epoll, and the report says which read",
            arguments: ["io_uring", "epoll"]
        )
        func fanoutWithEachReader(reader: String) async throws {
            let gateway = try TestGateway()
            let redis = try RedisServer()
            defer { redis.stop() }
            let (code, report, io) = try await runBench([
                "fanout", "--server", gateway.server, "--subscribers", "200", "--routes", "50", "--messages", "2000",
                "--against", redis.url, "--duration", "20s", "--timeout", "20s", "--reader", reader,
            ])
            #expect(code == 0, "\(io.capturedErr)")
            let all = runs(report)
            #expect(all.map { $0["system"] as? String } == ["longlink", "redis"])
            for run in all {
                #expect(figure(run, "subscribed") == 200)
                #expect(figure(run, "deliveries") == 8_000, "\(run["system"] ?? "")")
                #expect(figure(run, "lost") == 0)
                #expect(figure(run, "duplicates") == 0)
                #expect(figure(run, "gaps") == 0)
                let latency = try #require(run["latency"] as? [String: Any])
                #expect(latency["count"] as? Int == 8_000)
                #expect((run["failures"] as? [String: Any])?.isEmpty ?? true, "\(run["failures"] ?? "")")
            }
            let notes = report["notes"] as? [String] ?? []
            #expect(notes.contains { $0.contains("through io_uring") } == (reader == "io_uring"), "\(notes)")
        }

        @Test("a paced fanout respects --rate and stops at --messages")
        func pacedFanout() async throws {
            let gateway = try TestGateway()
            let (code, report, io) = try await runBench([
                "fanout", "--server", gateway.server, "--subscribers", "20", "--routes", "20", "--messages", "200",
                "--rate", "400", "--timeout", "20s",
            ])
            #expect(code == 0, "\(io.capturedErr)")
            let run = try #require(runs(report).first)
            #expect(figure(run, "published") == 200)
            #expect(figure(run, "deliveries") == 200)
            // 200 publishes at 400/s cannot take much less than half a second (a bound on pacing, not a timing test).
            #expect((figure(run, "seconds") ?? 0) >= 0.4)
        }

        @Test("--duration ends a long fanout early and the report says what was delivered")
        func durationBound() async throws {
            let gateway = try TestGateway()
            let (code, report, io) = try await runBench([
                "fanout", "--server", gateway.server, "--subscribers", "10", "--routes", "2", "--messages", "1000000",
                "--rate", "200", "--duration", "1s", "--timeout", "10s",
            ])
            #expect(code == 0, "\(io.capturedErr)")
            let run = try #require(runs(report).first)
            let published = try #require(figure(run, "published"))
            #expect(published > 0 && published < 1_000)
            #expect(figure(run, "lost") == 0)
        }

        @Test("without --server the bench starts a gateway child of the longlink executable and stops it")
        func ownGateway() async throws {
            let executable = try #require(longlinkExecutable(), "the longlink executable is built by `swift build`")
            let server = try BenchServers.startGateway(executable: executable)
            let pid = server.pid
            #expect(server.stats != nil)
            server.stop()
            #expect(pid.map { ProcessStats.read(pid: $0) } == .some(nil))
            let report = try LonglinkBench.run(
                BenchParameters(scenario: .fanout, subscribers: 10, routes: 5, messages: 50, timeout: 20),
                command: "test",
                executable: executable
            )
            #expect(report.runs.first?.figure("deliveries") == 100)
            #expect((report.runs.first?.figure("server_rss_bytes") ?? 0) > 0)
        }
    }
}

extension BenchEndToEnd {
    @Suite("bench store and codec", .ownThreads)
    struct StoreCodecTests {
        @Test("store reports memory, SQLite and SQLite behind the writer, every change applied")
        func store() async throws {
            let (code, report, io) = try await runBench(["store", "--messages", "4000"])
            #expect(code == 0, "\(io.capturedErr)")
            let all = runs(report)
            #expect(all.map { $0["system"] as? String } == ["memory", "sqlite", "sqlite-writer"])
            #expect(figure(all[0], "changes") == 4_000 && figure(all[0], "refused") == 0)
            #expect(figure(all[1], "changes") == 4_000 && figure(all[1], "refused") == 0)
            #expect(figure(all[2], "acknowledged") == 4_000)
            #expect((figure(all[2], "commits") ?? 0) >= 1)
            #expect((report["targets"] as? [[String: Any]])?.count == 2)
        }
    }
}
