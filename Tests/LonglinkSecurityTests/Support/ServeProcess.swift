import Foundation
import Glibc
import LonglinkTestSupport

/// `longlink serve` as a child process on ephemeral loopback ports, for checks that need the server's own
/// resident memory (an in-process gateway shares the test runner's heap with every parallel suite).
/// `LONGLINK_TEST_BINARY` runs the checks against another build (e.g. the binary of an older commit).
final class ServeProcess {
    let process: ChildProcess
    private let scratch: String
    /// The client port.
    private(set) var port = 0
    /// The operations port (/metrics).
    private(set) var operationsPort = 0

    init(_ arguments: [String]) throws {
        guard let binary = Self.binary() else { throw ServeProcessError("the longlink executable is not built") }
        scratch = NSTemporaryDirectory() + "longlink-serve-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        do {
            process = try ChildProcess(
                binary,
                [
                    "serve", "--store", "memory", "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0",
                    "--insecure-dev", "--log-level", "warning", "--log-format", "text",
                ] + arguments,
                standardError: scratch + "/serve.err"
            )
        } catch {
            try? FileManager.default.removeItem(atPath: scratch)
            throw error
        }
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline && process.isRunning && (port == 0 || operationsPort == 0) {
            port = number(after: "serving on 127.0.0.1:") ?? 0
            operationsPort = number(after: "operations: http://127.0.0.1:") ?? 0
            usleep(20_000)
        }
        guard port != 0 && operationsPort != 0 else {
            stop()
            throw ServeProcessError("longlink serve did not start: \(text)")
        }
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: scratch)
    }

    /// What the server wrote to stderr so far.
    var text: String { process.standardErrorText }

    private func number(after prefix: String) -> Int? {
        let text = self.text
        guard let range = text.range(of: prefix) else { return nil }
        return Int(text[range.upperBound...].prefix { $0.isNumber })
    }

    /// The server's resident set size in bytes (VmRSS), or nil when it has exited.
    var residentBytes: Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(process.pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return nil }
        return line.split(separator: " ").dropFirst().first.flatMap { Int($0) }.map { $0 * 1024 }
    }

    /// The sum of a metric's samples whose labels contain `labels` (0 when absent).
    func metric(_ name: String, labels: String = "") throws -> Int {
        let text = try HTTPTestClient.fetch(port: operationsPort, "GET", "/metrics").text
        var total = 0.0
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " ") else { continue }
            let series = line[..<space]
            let metricName = series.prefix { $0 != "{" && $0 != " " }
            guard metricName == name, labels.isEmpty || series.contains(labels) else { continue }
            total += Double(line[line.index(after: space)...]) ?? 0
        }
        return Int(total)
    }

    /// SIGTERM, then SIGKILL if it has not exited within 10 s; always reaped.
    func stop() { _ = process.terminate(timeout: .seconds(10)) }

    /// `LONGLINK_TEST_BINARY`, else the `longlink` built next to this test binary or under `.build/debug/`.
    static func binary() -> String? {
        if let chosen = ProcessInfo.processInfo.environment["LONGLINK_TEST_BINARY"] { return chosen }
        var candidates: [String] = []
        if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            candidates.append((executable as NSString).deletingLastPathComponent + "/longlink")
        }
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        candidates.append(package.appendingPathComponent(".build/debug/longlink").path)
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}

/// A child process that did not start.
struct ServeProcessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
