import Foundation
import Glibc
import LonglinkCore
import LonglinkTestSupport
import Testing

@testable import LonglinkCommands

@Suite("serve: operations listener, JSON logs and SIGHUP reload (real process)", .serialized, .ownThreads)
struct ServeOperationsTests {
    @Test("SIGHUP re-reads the config file: the file's log level applies unless a flag or env set it")
    func reloaderPrecedence() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("longlink-reload-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("longlink.conf").path
        try "log-level = warning\nstore = memory\n".write(toFile: file, atomically: true, encoding: .utf8)
        let resolver = OptionResolver(specs: ServeOptions.specs)
        let fromFile = try resolver.resolve(arguments: ["--config", file], environment: [:])
        let levels = LogLevelSwitchProbe.make(.warning)
        let reloader = ConfigReloader(options: fromFile, environment: [:])
        try "log-level = debug\nstore = memory\n".write(toFile: file, atomically: true, encoding: .utf8)
        #expect(reloader.reload(into: levels).contains("warning → debug"))
        #expect(levels.level == .debug)
        try "log-level = loud\n".write(toFile: file, atomically: true, encoding: .utf8)
        #expect(reloader.reload(into: levels).contains("not valid"))
        #expect(levels.level == .debug)

        let fromFlag = try resolver.resolve(arguments: ["--config", file, "--log-level", "error"], environment: [:])
        try "log-level = trace\n".write(toFile: file, atomically: true, encoding: .utf8)
        let pinned = LogLevelSwitchProbe.make(.error)
        #expect(ConfigReloader(options: fromFlag, environment: [:]).reload(into: pinned).contains("set by flag"))
        #expect(pinned.level == .error)
        let none = try resolver.resolve(arguments: [], environment: [:])
        #expect(ConfigReloader(options: none, environment: [:]).reload(into: pinned).contains("no config file"))
    }

    @Test("longlink serve: metrics and admin on --metrics-listen, JSON log lines, SIGHUP changes the level, SIGTERM exits 0")
    func serveProcess() throws {
        let binary = try #require(Self.longlinkPath(), "longlink not built; run `swift build`")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("longlink-serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("longlink.conf").path
        try "store = memory\nlog-level = info\nlisten = 127.0.0.1:0\nmetrics-listen = 127.0.0.1:0\nloops = 1\n"
            .write(toFile: config, atomically: true, encoding: .utf8)

        let output = OutputCollector()
        let process = try ChildProcess(binary, ["serve", "--config", config, "--insecure-dev"], standardError: output.path)
        defer { process.kill() }
        let port = try #require(output.waitForMatch(after: "operations: http://127.0.0.1:", seconds: 20), "no operations address in: \(output.text)")
        #expect(try HTTPTestClient.fetch(port: port, "GET", "/healthz").status == 200)
        #expect(try HTTPTestClient.fetch(port: port, "GET", "/readyz").status == 200)
        #expect(try HTTPTestClient.fetch(port: port, "GET", "/metrics").text.contains("longlink_ready 1"))
        let auth = [("Authorization", "Bearer operator")]
        #expect(try HTTPTestClient.fetch(port: port, "GET", "/admin/log-level", headers: auth).text == #"{"level":"info"}"#)

        try "store = memory\nlog-level = debug\nlisten = 127.0.0.1:0\nmetrics-listen = 127.0.0.1:0\nloops = 1\n"
            .write(toFile: config, atomically: true, encoding: .utf8)
        process.signal(SIGHUP)
        #expect(output.waitFor("log level info → debug", seconds: 10))
        #expect(try HTTPTestClient.fetch(port: port, "GET", "/admin/log-level", headers: auth).text == #"{"level":"debug"}"#)

        process.signal(SIGTERM)
        let deadline = Date().addingTimeInterval(20)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        #expect(!process.isRunning)
        #expect(process.termination == .exited(0))
        let lines = output.text.split(separator: "\n").filter { $0.hasPrefix("{") }
        #expect(!lines.isEmpty)
        for line in lines {
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object?["level"] != nil && object?["msg"] != nil, "not a JSON log line: \(line)")
        }
        #expect(output.text.contains(#""logger":"admin""#))
        #expect(!output.text.contains("Bearer operator"))
    }

    @Test("deploy/longlink.service passes systemd-analyze verify and scores below 2.0 on its security exposure")
    func systemdUnit() throws {
        let binary = try #require(Self.longlinkPath(), "longlink not built; run `swift build`")
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let unit = try String(contentsOf: package.appendingPathComponent("deploy/longlink.service"), encoding: .utf8)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("longlink-unit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("longlink.service").path
        try unit.replacingOccurrences(of: "/usr/local/bin/longlink", with: binary).write(toFile: path, atomically: true, encoding: .utf8)
        let verify = try Self.run("/usr/bin/systemd-analyze", ["verify", path])
        #expect(verify.status == 0 && verify.output.isEmpty, "\(verify.output)")
        let security = try Self.run("/usr/bin/systemd-analyze", ["security", "--offline=yes", "--threshold=20", path])
        #expect(security.status == 0, "\(security.output)")
        #expect(security.output.contains("Overall exposure level"))
    }

    /// Runs `executable` to its end (killed after 120 s); stdout and stderr together.
    static func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let output = try ProcessRunner.run([executable] + arguments, mergingStandardError: true, timeout: .seconds(120))
        return (output.status, String(decoding: output.stdout, as: UTF8.self))
    }

    /// The `longlink` binary next to the test binary or under the package's `.build/debug/`.
    static func longlinkPath() -> String? {
        var candidates: [String] = []
        if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            candidates.append(URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent("longlink").path)
        }
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        candidates.append(package.appendingPathComponent(".build/debug/longlink").path)
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}

/// A level switch for tests (the type lives in LonglinkCore).
enum LogLevelSwitchProbe {
    static func make(_ level: LogLevel) -> LogLevelSwitch { LogLevelSwitch(level) }
}

/// A file a child writes its stderr to (a temporary file, removed with the value), read as far as it got.
final class OutputCollector: Sendable {
    /// The file's path.
    let path = NSTemporaryDirectory() + "longlink-output-\(UUID().uuidString).log"

    deinit { try? FileManager.default.removeItem(atPath: path) }

    var text: String { String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self) }

    /// Waits until `needle` appears.
    func waitFor(_ needle: String, seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if text.contains(needle) { return true }
            usleep(20_000)
        }
        return text.contains(needle)
    }

    /// Waits for `prefix` followed by a number and returns the number.
    func waitForMatch(after prefix: String, seconds: Double) -> Int? {
        guard waitFor(prefix, seconds: seconds) else { return nil }
        let rest = text.components(separatedBy: prefix)[1]
        return Int(rest.prefix { $0.isNumber })
    }
}
