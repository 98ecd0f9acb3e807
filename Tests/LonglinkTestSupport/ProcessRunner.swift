import Foundation

/// Runs a command-line tool (the `openssl` binary, mostly) with a deadline and collects its output through
/// temporary files (no pipe a chatty child could fill).
public enum ProcessRunner {
    /// What a finished process left behind.
    public struct Output: Sendable {
        /// Exit status (-1 when it was killed at the deadline).
        public var status: Int32
        /// Standard output.
        public var stdout: [UInt8]
        /// Standard error.
        public var stderr: String
        /// Both streams as text.
        public var text: String { String(decoding: stdout, as: UTF8.self) + "\n" + stderr }
    }

    /// Runs `arguments[0]` (looked up in PATH) with the rest as arguments, `input` on stdin; kills it after `timeout`.
    public static func run(
        _ arguments: [String],
        input: [UInt8] = [],
        environment: [String: String]? = nil,
        timeout: Duration = .seconds(20)
    ) throws -> Output {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("longlink-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let inURL = scratch.appendingPathComponent("in")
        let outURL = scratch.appendingPathComponent("out")
        let errURL = scratch.appendingPathComponent("err")
        try Data(input).write(to: inURL)
        try Data().write(to: outURL)
        try Data().write(to: errURL)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.standardInput = try FileHandle(forReadingFrom: inURL)
        process.standardOutput = try FileHandle(forWritingTo: outURL)
        process.standardError = try FileHandle(forWritingTo: errURL)
        try process.run()
        let deadline = ContinuousClock.now + timeout
        while process.isRunning && ContinuousClock.now < deadline { usleep(5_000) }
        var status: Int32 = -1
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        } else {
            process.waitUntilExit()
            status = process.terminationStatus
        }
        return Output(
            status: status,
            stdout: Array((try? Data(contentsOf: outURL)) ?? Data()),
            stderr: String(decoding: (try? Data(contentsOf: errURL)) ?? Data(), as: UTF8.self)
        )
    }
}
