import Foundation
import Glibc
import LonglinkTestSupport

/// A child process started with exactly the given environment and working directory (as a service manager or a
/// shell starts it), stdout and stderr together in a file so a chatty child never blocks on a pipe. Killed by
/// PID when the value goes away while it still runs.
final class SpawnedCommand {
    let child: ChildProcess
    let outputPath: String

    /// Starts `arguments[0]` (an absolute path) with the rest as its arguments.
    init(_ arguments: [String], environment: [String: String], directory: String, outputPath: String) throws {
        self.outputPath = outputPath
        child = try ChildProcess(
            arguments[0], Array(arguments.dropFirst()), environment: environment, directory: directory,
            standardOutput: outputPath, standardError: outputPath
        )
    }

    /// Runs `command` with `/bin/sh -c` to its end (killed after `seconds`); (exit status or nil, output).
    static func shell(
        _ command: String,
        environment: [String: String],
        directory: String,
        outputPath: String,
        seconds: Double = 60
    ) throws -> (status: Int32?, output: String) {
        let child = try SpawnedCommand(["/bin/sh", "-c", command], environment: environment, directory: directory, outputPath: outputPath)
        let status = child.waitForExit(seconds: seconds)
        return (status, child.output)
    }

    /// Everything it wrote so far.
    var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }

    /// The exit status once it ended within `seconds` (128 + the signal if one ended it); nil (and killed) otherwise.
    func waitForExit(seconds: Double) -> Int32? {
        child.waitForExit(timeout: .milliseconds(Int(seconds * 1000)))?.shellStatus
    }

    /// The digits right after `prefix` in the output, once they appear within `seconds` (nil if it exits first).
    func waitForNumber(after prefix: String, seconds: Double) -> Int? {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let text = output
            if let range = text.range(of: prefix) {
                let digits = text[range.upperBound...].prefix { $0.isNumber }
                if !digits.isEmpty, text[range.upperBound...].dropFirst(digits.count).first != nil { return Int(digits) }
            }
            if !child.isRunning { return nil }
            usleep(20_000)
        }
        return nil
    }

    /// SIGTERM by PID, then the exit status within `seconds` (nil, and SIGKILL, if it did not exit).
    func terminate(seconds: Double = 20) -> Int32? {
        child.signal(SIGTERM)
        return waitForExit(seconds: seconds)
    }
}
