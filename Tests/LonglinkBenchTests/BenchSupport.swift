import Foundation
import LonglinkBench
import LonglinkCommands
import LonglinkServer
import LonglinkGateway
import LonglinkStores
import LonglinkTestSupport
import Testing

/// Every end-to-end bench test, one at a time: each runs real gateways, redis-servers and hundreds of
/// connections, and running them side by side would only measure the contention.
@Suite("bench end to end", .serialized, .ownThreads)
enum BenchEndToEnd {}

/// A real gateway in the test process on a free loopback port (the composition `longlink serve` runs).
final class TestGateway {
    let running: RunningGateway
    var port: Int { running.gateway.port }
    var server: String { "127.0.0.1:\(port)" }

    init(store: StoreSpecification = .memory, pingMillis: UInt64 = 25_000) throws {
        running = try RunningGateway.start(
            gateway: GatewayConfiguration(
                host: "127.0.0.1",
                port: 0,
                loopCount: 2,
                peer: PeerSettings(nodeID: "bench-test", pingIntervalMillis: pingMillis, maxSubscriptions: 1024),
                outboundLimit: 64 << 20,
                drainPeriod: .milliseconds(200)
            ),
            store: store
        )
    }

    deinit { running.drainAndStop() }
}

/// Runs `longlink bench` in process with a capturing IO and returns the exit code and the parsed JSON report.
func runBench(_ arguments: [String]) async throws -> (code: Int32, report: [String: Any], io: CommandIO) {
    let io = CommandIO.capturing()
    let code = await LonglinkCLI.main(arguments: ["bench"] + arguments + ["--json"], environment: [:], io: io)
    let object = (try? JSONSerialization.jsonObject(with: Data(io.capturedOut.utf8))) as? [String: Any] ?? [:]
    return (code, object, io)
}

/// The runs of a JSON report.
func runs(_ report: [String: Any]) -> [[String: Any]] { report["runs"] as? [[String: Any]] ?? [] }

/// A named figure of a JSON run.
func figure(_ run: [String: Any], _ name: String) -> Double? {
    (run["figures"] as? [[String: Any]])?.first { $0["name"] as? String == name }.flatMap { figure in
        (figure["value"] as? Double) ?? (figure["value"] as? Int).map(Double.init)
    }
}

/// The `longlink` executable built next to the test bundle (`.build/<config>/longlink`).
func longlinkExecutable() -> String? {
    var candidates: [String] = []
    if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
        var directory = executable
        // The test runner is .build/<triple>/debug/LonglinkPackageTests.xctest (a file or bundle directory).
        for _ in 0..<3 {
            directory = (directory as NSString).deletingLastPathComponent
            candidates.append("\(directory)/longlink")
        }
    }
    let package = (((#filePath as NSString).deletingLastPathComponent as NSString).deletingLastPathComponent as NSString)
        .deletingLastPathComponent
    candidates.append("\(package)/.build/debug/longlink")
    return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
}
