import Foundation
import LonglinkBench
import LonglinkCommands
import LonglinkTestSupport
import Testing

@Suite("bench parameters and output", .ownThreads)
struct BenchOutputTests {
    @Test("parameters outside their bounds are refused with a message naming the flag")
    func bounds() {
        let bad: [(BenchParameters, String)] = [
            (BenchParameters(scenario: .fanout, payload: 8), "--payload"),
            (BenchParameters(scenario: .fanout, rate: -1), "--rate"),
            (BenchParameters(scenario: .fanout, duration: 0), "--duration"),
            (BenchParameters(scenario: .fanout, workers: 0), "--workers"),
            (BenchParameters(scenario: .fanout, routes: 0), "--routes"),
            (BenchParameters(scenario: .fanout, against: "http://x"), "--against"),
            (BenchParameters(scenario: .store, tls: true), "--tls"),
            (BenchParameters(scenario: .fanout, restart: true), "--restart"),
            (BenchParameters(scenario: .storm, server: "127.0.0.1:1", restart: true), "cannot restart a server it did not start"),
            (BenchParameters(scenario: .codec, sourceAddresses: ["127.0.0.1"]), "--source-addresses"),
            (BenchParameters(scenario: .connect, caFile: "ca.pem"), "--tls"),
            (BenchParameters(scenario: .connect, tls: true, caFile: "ca.pem", insecure: true), "--insecure"),
            (BenchParameters(scenario: .fanout, workers: 2), "--workers"),
            (BenchParameters(scenario: .idle, workers: 2, against: "redis"), "--workers"),
        ]
        for (parameters, flag) in bad {
            #expect(throws: BenchError.self) { try parameters.validate() }
            do {
                try parameters.validate()
            } catch {
                #expect(error.message.contains(flag), "\(error.message)")
            }
        }
        #expect(throws: Never.self) { try BenchParameters(scenario: .fanout, against: "redis://127.0.0.1:6379").validate() }
        #expect(throws: Never.self) { try BenchParameters(scenario: .connect, workers: 2, tls: true, insecure: true).validate() }
        #expect(throws: Never.self) { try BenchParameters(scenario: .idle, workers: 4).validate() }
        #expect(throws: Never.self) { try BenchParameters(scenario: .fanout, tls: true, against: "redis").validate() }
        #expect(throws: Never.self) { try BenchParameters(scenario: .storm, restart: true).validate() }
    }

    @Test("the command refuses an unknown scenario and a bad flag with exit code 2")
    func commandErrors() async {
        let io = CommandIO.capturing()
        #expect(await LonglinkCLI.main(arguments: ["bench", "nonsense"], environment: [:], io: io) == 2)
        #expect(io.capturedErr.contains("unknown scenario"))
        let io2 = CommandIO.capturing()
        #expect(await LonglinkCLI.main(arguments: ["bench", "fanout", "--payload", "4"], environment: [:], io: io2) == 2)
        #expect(io2.capturedErr.contains("--payload"))
    }

    @Test("--json prints the longlink-bench/1 schema: machine, runs with figures, targets")
    func jsonSchema() async throws {
        let io = CommandIO.capturing()
        let code = await LonglinkCLI.main(arguments: ["bench", "codec", "--messages", "2000", "--json"], environment: [:], io: io)
        #expect(code == 0, "\(io.capturedErr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(io.capturedOut.utf8)) as? [String: Any])
        #expect(object["schema"] as? String == "longlink-bench/1")
        #expect(object["scenario"] as? String == "codec")
        #expect(object["interrupted"] as? Bool == false)
        #expect(object["targets"] is [Any])
        let machine = try #require(object["machine"] as? [String: Any])
        #expect((machine["cores"] as? Int ?? 0) >= 1)
        #expect((machine["openFileLimit"] as? Int ?? 0) > 0)
        #expect((machine["memoryBytes"] as? Int ?? 0) > 0)
        let runs = try #require(object["runs"] as? [[String: Any]])
        #expect(runs.count == 1)
        let figures = try #require(runs[0]["figures"] as? [[String: Any]])
        let names = figures.compactMap { $0["name"] as? String }
        #expect(names.contains("encodes_per_second") && names.contains("push_bytes") && names.contains("json_bytes"))
        for figure in figures {
            #expect(figure["value"] is Double || figure["value"] is Int)
            #expect(figure["unit"] is String)
        }
        #expect(runs[0]["system"] as? String == "protobuf")
        #expect(runs[0]["series"] is [Any] && runs[0]["failures"] is [String: Any] && runs[0]["latencyBuckets"] is [Any])
    }

    @Test("CSV and SVG render a report with series and latencies")
    func renderings() {
        var report = BenchReport(scenario: "fanout", command: "longlink bench fanout")
        var run = BenchRun(system: "longlink", label: "test", figures: [Figure("deliveries_per_second", 1234, "/s")])
        run.series = [
            SeriesPoint(second: 1, deliveriesPerSecond: 1000, publishesPerSecond: 10, connections: 5, p99Millis: 0.5),
            SeriesPoint(second: 2, deliveriesPerSecond: 1500, publishesPerSecond: 15, connections: 5, p99Millis: 0.7),
        ]
        run.latencyBuckets = [[100_000, 10], [500_000, 5], [2_000_000, 1]]
        run.latency = nil
        report.runs = [run]
        let csv = BenchRendering.csv(report)
        #expect(csv.split(separator: "\n").count == 3)
        #expect(csv.hasPrefix("system,run,second,deliveries_per_second"))
        #expect(csv.contains("longlink,0,2,1500,15,5,0.7"))
        let svg = BenchSVG.chart(report)
        #expect(svg.hasPrefix("<svg") && svg.contains("</svg>"))
        #expect(svg.contains("polyline"))
        #expect(svg.contains("deliveries per second over time"))
        #expect(svg.contains("latency by percentile"))
        let bars = BenchSVG.bars(title: "a < b", unit: "/s", values: [("longlink", 2), ("redis", 1)])
        #expect(bars.contains("a &lt; b") && bars.contains("<rect"))
        #expect(BenchRendering.table(report).contains("1,234/s"))
    }

    @Test("--from-json re-renders a saved report: table, SVG with the headline bars, CSV")
    func fromJSON() async throws {
        let io = CommandIO.capturing()
        #expect(await LonglinkCLI.main(arguments: ["bench", "codec", "--messages", "1000", "--json"], environment: [:], io: io) == 0)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let json = directory.appendingPathComponent("codec.json").path
        try io.capturedOut.write(toFile: json, atomically: true, encoding: .utf8)
        let svg = directory.appendingPathComponent("codec.svg").path
        let rendered = CommandIO.capturing()
        #expect(await LonglinkCLI.main(arguments: ["bench", "--from-json", json, "--svg", svg], environment: [:], io: rendered) == 0)
        #expect(rendered.capturedOut.contains("encodes_per_second"))
        let chart = try String(contentsOfFile: svg, encoding: .utf8)
        #expect(chart.contains("push encodes per second") && chart.contains("<rect"))
        let broken = CommandIO.capturing()
        #expect(await LonglinkCLI.main(arguments: ["bench", "--from-json", svg], environment: [:], io: broken) == 1)
    }
}
