import LonglinkBench
import LonglinkTestSupport
import Testing

extension BenchEndToEnd {
    /// `bench http-publish` and `bench line` against bench's own gateway (a `longlink serve` child on free ports).
    /// Figures are checked for being measured and consistent, never for speed.
    @Suite("bench backend scenarios: http-publish and line", .ownThreads)
    struct BackendScenarioTests {
        @Test("http-publish answers every keep-alive publish with 200 and reports changes/s and latency")
        func httpPublish() throws {
            let executable = try #require(longlinkExecutable())
            let report = try LonglinkBench.run(
                BenchParameters(scenario: .httpPublish, connections: 4, duration: 1, timeout: 20),
                command: "test",
                executable: executable
            )
            let run = try #require(report.runs.first)
            #expect((run.figure("changes") ?? 0) > 0)
            #expect(run.figure("non_200") == 0)
            #expect((run.figure("changes_per_second") ?? 0) > 0)
            #expect((run.latency?.count ?? 0) > 0)
        }

        @Test("line: the line-wide subscriber gets every accepted change of every order, in order per order")
        func line() throws {
            let executable = try #require(longlinkExecutable())
            let report = try LonglinkBench.run(
                BenchParameters(scenario: .line, routes: 20, rate: 500, duration: 1, timeout: 20),
                command: "test",
                executable: executable
            )
            let run = try #require(report.runs.first)
            let accepted = try #require(run.figure("accepted"))
            #expect(accepted > 100)
            #expect(run.figure("refused") == 0)
            #expect(run.figure("lost") == 0)
            #expect(run.figure("out_of_order") == 0)
            #expect((run.figure("delivered") ?? 0) >= accepted)
            #expect(run.figure("p99_ms") != nil)
        }
    }
}
