import LonglinkBench
import LonglinkCommands
import LonglinkTestSupport
import Testing

extension BenchEndToEnd {
    @Suite("bench storm --restart", .ownThreads)
    struct StormRestartEndToEndTests {
        @Test("storm --restart kills the gateway, restarts it on the same store; everyone resumes, nothing lost or duplicated")
        func restart() throws {
            let executable = try #require(longlinkExecutable())
            let report = try LonglinkBench.run(
                BenchParameters(
                    scenario: .storm,
                    subscribers: 40,
                    routes: 8,
                    messages: 100_000,
                    rate: 200,
                    duration: 3,
                    timeout: 20,
                    restart: true
                ),
                command: "test",
                executable: executable
            )
            let run = try #require(report.runs.first)
            #expect(run.label.contains("SIGKILL"))
            #expect(run.failures.isEmpty, "\(run.failures)")
            #expect(run.figure("subscribed") == 40)
            #expect(run.figure("resubscribed") == 40)
            #expect((run.figure("gateway_restart_seconds") ?? -1) > 0)
            #expect((run.figure("recovery_seconds") ?? -1) >= (run.figure("gateway_restart_seconds") ?? 0))
            #expect((run.figure("reconnect_attempts") ?? 0) >= 41, "every subscriber and the publisher reconnect")
            #expect((run.figure("acknowledged") ?? 0) > 0)
            #expect(run.figure("lost") == 0)
            #expect(run.figure("duplicates") == 0)
            #expect(run.figure("gaps") == 0)
            #expect(run.figure("resumes_not_recovered") == 0)
            #expect(report.notes.contains { $0.contains("SIGKILL") })
        }

        @Test("storm --restart with --server is refused: bench cannot restart a server it did not start")
        func restartNeedsOwnGateway() async throws {
            let (code, _, io) = try await runBench(["storm", "--server", "127.0.0.1:1", "--restart"])
            #expect(code == 2)
            #expect(io.capturedErr.contains("cannot restart a server it did not start"), "\(io.capturedErr)")
        }
    }
}
