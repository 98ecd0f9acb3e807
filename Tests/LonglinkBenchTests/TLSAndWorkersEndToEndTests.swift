import LonglinkBench
import LonglinkTestSupport
import Testing

extension BenchEndToEnd {
    @Suite("bench --tls and --workers end to end", .ownThreads)
    struct TLSAndWorkersEndToEndTests {
        @Test("connect --tls starts a TLS gateway with a throwaway CA and measures TCP + TLS + connect latency")
        func connectOverTLS() throws {
            let executable = try #require(longlinkExecutable())
            let report = try LonglinkBench.run(
                BenchParameters(scenario: .connect, connections: 40, timeout: 20, tls: true),
                command: "test",
                executable: executable
            )
            let run = try #require(report.runs.first)
            #expect(run.label.contains("TLS"))
            #expect(run.figure("connected") == 40, "\(run.failures)")
            #expect(run.figure("failed") == 0)
            #expect(run.connectLatency?.count == 40)
            #expect((run.connectLatency?.p50 ?? 0) > 0)
            #expect(run.figure("tls_full_handshakes") == 40)
            #expect(run.figure("tls_resumed_handshakes") == 0)
        }

        @Test("connect --tls reconnects every client with its saved session in a second run: resumed handshakes per second")
        func connectOverTLSResumes() throws {
            let executable = try #require(longlinkExecutable())
            let report = try LonglinkBench.run(
                BenchParameters(scenario: .connect, connections: 40, timeout: 20, tls: true),
                command: "test",
                executable: executable
            )
            #expect(report.runs.count == 2)
            let resumed = try #require(report.runs.last)
            #expect(resumed.label.contains("saved TLS sessions"), "\(resumed.label)")
            #expect(resumed.figure("connected") == 40, "\(resumed.failures)")
            #expect(resumed.figure("tls_resumed_handshakes") == 40)
            #expect(resumed.figure("tls_full_handshakes") == 0)
            #expect((resumed.figure("resumed_handshakes_per_second") ?? 0) > 0)
        }

        @Test("connect --tls trusting another CA fails every handshake, counted by reason")
        func connectOverTLSWithWrongCA() throws {
            let executable = try #require(longlinkExecutable())
            let other = try TestCertificates()
            let report = try LonglinkBench.run(
                BenchParameters(scenario: .connect, connections: 5, timeout: 20, tls: true, caFile: other.caFile),
                command: "test",
                executable: executable
            )
            let run = try #require(report.runs.first)
            #expect(run.figure("connected") == 0)
            #expect(run.figure("failed") == 5)
            #expect(run.failures.keys.contains { $0.hasPrefix("tls") }, "\(run.failures)")
        }

        @Test("connect --workers 2 spreads the connections over two processes and merges their histograms")
        func connectWithWorkers() throws {
            let executable = try #require(longlinkExecutable())
            let gateway = try TestGateway()
            let report = try LonglinkBench.run(
                BenchParameters(scenario: .connect, server: gateway.server, connections: 61, timeout: 20, workers: 2),
                command: "test",
                executable: executable
            )
            let run = try #require(report.runs.first)
            #expect(run.figure("workers") == 2)
            #expect(run.figure("connections") == 61)
            #expect(run.figure("connected") == 61, "\(run.failures)")
            #expect(run.figure("failed") == 0)
            #expect(run.connectLatency?.count == 61)
            #expect((run.figure("connections_per_second") ?? 0) > 0)
            #expect(BenchSVG.chart(report).contains("connect + handshake latency by percentile"))
        }

        @Test("connect --tls --workers 2: the workers trust the throwaway CA of the parent's gateway")
        func connectOverTLSWithWorkers() throws {
            let executable = try #require(longlinkExecutable())
            let report = try LonglinkBench.run(
                BenchParameters(scenario: .connect, connections: 30, timeout: 20, workers: 2, tls: true),
                command: "test",
                executable: executable
            )
            let run = try #require(report.runs.first)
            #expect(run.figure("connected") == 30, "\(run.failures)")
            #expect(run.connectLatency?.count == 30)
        }

        @Test("idle --workers 2 holds the connections in two processes while the parent measures the server")
        func idleWithWorkers() throws {
            let executable = try #require(longlinkExecutable())
            let report = try LonglinkBench.run(
                BenchParameters(scenario: .idle, routes: 10, connections: 120, duration: 1, timeout: 20, workers: 2),
                command: "test",
                executable: executable
            )
            let run = try #require(report.runs.first)
            #expect(run.figure("subscribed") == 120, "\(run.failures)")
            #expect(run.figure("open_after_idle") == 120)
            #expect(run.figure("server_bytes_per_connection") != nil)
            #expect((run.figure("server_open_files") ?? 0) >= 120)
        }
    }
}
