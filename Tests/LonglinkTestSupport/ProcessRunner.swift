import Foundation
import Glibc

/// Runs a command-line tool (the `openssl` binary, mostly) with a deadline and collects its output through
/// temporary files (no pipe a chatty child could fill).
///
/// A `ChildProcess` (posix_spawn, reaped by its own PID), not Foundation's `Process`, which can miss a child's exit
/// inside the parallel suite.
public enum ProcessRunner {
    /// What a finished process left behind.
    public struct Output: Sendable {
        /// Exit status (-1 when it was killed at the deadline or died of a signal).
        public var status: Int32
        /// Standard output.
        public var stdout: [UInt8]
        /// Standard error.
        public var stderr: String
        /// Both streams as text.
        public var text: String { String(decoding: stdout, as: UTF8.self) + "\n" + stderr }
    }

    /// A child that could not be started.
    public struct SpawnFailure: Error, CustomStringConvertible {
        public var command: String
        public var code: Int32
        public var description: String { "cannot start \(command): \(String(cString: strerror(code)))" }
    }

    /// Runs `arguments[0]` (looked up in PATH) with the rest as arguments, `input` on stdin; kills it after `timeout`.
    /// `mergingStandardError` sends stderr into the stdout file (in write order; `stderr` is then empty).
    public static func run(
        _ arguments: [String],
        input: [UInt8] = [],
        environment: [String: String]? = nil,
        mergingStandardError: Bool = false,
        timeout: Duration = .seconds(20)
    ) throws -> Output {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("longlink-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let inPath = scratch.appendingPathComponent("in").path
        let outPath = scratch.appendingPathComponent("out").path
        let errPath = mergingStandardError ? outPath : scratch.appendingPathComponent("err").path
        try Data(input).write(to: URL(fileURLWithPath: inPath))

        let child: ChildProcess
        do {
            child = try ChildProcess(
                "/usr/bin/env", arguments, environment: environment, standardInput: inPath, standardOutput: outPath,
                standardError: errPath
            )
        } catch let failure as ChildProcess.SpawnFailure {
            throw SpawnFailure(command: arguments.first ?? "", code: failure.code)
        }
        let termination = child.waitForExit(timeout: timeout)
        return Output(
            status: termination?.exitStatus ?? -1,
            stdout: Array((try? Data(contentsOf: URL(fileURLWithPath: outPath))) ?? Data()),
            stderr: mergingStandardError ? "" : child.standardErrorText
        )
    }
}
