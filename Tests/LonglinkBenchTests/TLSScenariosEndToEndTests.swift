import LonglinkBench
import LonglinkTestSupport
import Testing

extension BenchEndToEnd {
    @Suite("bench --tls for every network scenario", .ownThreads)
    struct TLSScenariosEndToEndTests {
        @Test("fanout --tls delivers every record over TLS to bench's own gateway, nothing lost or duplicated")
        func fanoutOverTLS() throws {
            let executable = try #require(longlinkExecutable())
            let report = try LonglinkBench.run(
                BenchParameters(scenario: .fanout, subscribers: 30, routes: 6, messages: 300, rate: 0, timeout: 20, tls: true),
                command: "test",
                executable: executable
            )
            let run = try #require(report.runs.first)
            #expect(run.label.hasSuffix("over TLS"), "\(run.label)")
            #expect(run.figure("subscribed") == 30, "\(run.failures)")
            #expect(run.figure("acknowledged") == 300)
            #expect(run.figure("deliveries") == 1_500)
            #expect(run.figure("lost") == 0)
            #expect(run.figure("duplicates") == 0)
            #expect(run.failures.isEmpty, "\(run.failures)")
        }

        @Test("orders, churn, storm and idle run over TLS too", arguments: [
            BenchParameters.Scenario.orders, .churn, .storm, .idle,
        ])
        func scenarioOverTLS(_ scenario: BenchParameters.Scenario) throws {
            let executable = try #require(longlinkExecutable())
            let parameters = BenchParameters(
                scenario: scenario,
                subscribers: 24,
                routes: 6,
                messages: scenario == .storm ? 100_000 : 120,
                rate: 200,
                connections: 24,
                duration: scenario == .storm ? 2 : 1,
                timeout: 20,
                churnRate: 40,
                tls: true
            )
            let report = try LonglinkBench.run(parameters, command: "test", executable: executable)
            #expect(!report.runs.isEmpty)
            for run in report.runs {
                #expect(run.label.contains("over TLS"), "\(run.label)")
                #expect(run.failures.isEmpty, "\(scenario): \(run.failures)")
                #expect((run.figure("subscribed") ?? 0) > 0, "\(scenario)")
                if scenario != .idle {
                    #expect(run.figure("lost") == 0, "\(scenario)")
                    #expect(run.figure("duplicates") == 0, "\(scenario)")
                    #expect((run.figure("deliveries") ?? 0) > 0, "\(scenario)")
                }
            }
            switch scenario {
            case .storm:
                #expect(report.runs[0].figure("resubscribed") == 24)
            case .idle:
                #expect(report.runs[0].figure("open_after_idle") == 24)
            case .churn:
                #expect((report.runs[1].figure("churn_connected") ?? 0) > 0)
                #expect(report.runs[1].figure("churn_failed") == 0)
            default:
                break
            }
        }

        @Test("fanout --tls --against redis says the Redis side runs plain TCP")
        func redisBaselineStaysPlain() throws {
            let executable = try #require(longlinkExecutable())
            let redis = try RedisServer()
            defer { redis.stop() }
            let report = try LonglinkBench.run(
                BenchParameters(scenario: .fanout, subscribers: 10, routes: 5, messages: 100, timeout: 20, tls: true, against: redis.url),
                command: "test",
                executable: executable
            )
            #expect(report.runs.map(\.system) == ["longlink", "redis"])
            #expect(report.runs[0].label.hasSuffix("over TLS"))
            #expect(report.runs[1].label.contains("plain TCP"), "\(report.runs[1].label)")
            #expect(report.notes.contains { $0.contains("Redis baseline runs over plain TCP") }, "\(report.notes)")
            #expect(report.runs[1].figure("deliveries") == 200)
        }

        @Test("idle --tls --workers 2: the workers hold TLS connections and trust the parent's throwaway CA")
        func idleOverTLSWithWorkers() throws {
            let executable = try #require(longlinkExecutable())
            let report = try LonglinkBench.run(
                BenchParameters(scenario: .idle, routes: 4, connections: 40, duration: 0.5, timeout: 20, workers: 2, tls: true),
                command: "test",
                executable: executable
            )
            let run = try #require(report.runs.first)
            #expect(run.figure("subscribed") == 40, "\(run.failures)")
            #expect(run.figure("open_after_idle") == 40)
        }
    }
}
