import Foundation
import Glibc

/// Runs a command-line tool (the `openssl` binary, mostly) with a deadline and collects its output through
/// temporary files (no pipe a chatty child could fill).
///
/// Started with `posix_spawn` and reaped with `waitpid` on its own PID, not with Foundation's `Process`: inside the
/// parallel suite `Process` can miss a child's exit (the child stays a zombie, `isRunning` stays true and
/// `waitUntilExit` never returns), which hung a whole `swift test` run.
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
    public static func run(
        _ arguments: [String],
        input: [UInt8] = [],
        environment: [String: String]? = nil,
        timeout: Duration = .seconds(20)
    ) throws -> Output {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("longlink-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let inPath = scratch.appendingPathComponent("in").path
        let outPath = scratch.appendingPathComponent("out").path
        let errPath = scratch.appendingPathComponent("err").path
        try Data(input).write(to: URL(fileURLWithPath: inPath))

        let pid = try spawn(arguments, environment: environment, stdin: inPath, stdout: outPath, stderr: errPath)
        let deadline = ContinuousClock.now + timeout
        var raw: Int32 = 0
        var exited = false
        while ContinuousClock.now < deadline {
            let reaped = waitpid(pid, &raw, WNOHANG)
            if reaped == pid { exited = true; break }
            if reaped < 0 && errno != EINTR { break }
            usleep(5_000)
        }
        if !exited {
            kill(pid, SIGKILL)
            while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
        }
        let exitedNormally = (raw & 0x7f) == 0
        return Output(
            status: exited && exitedNormally ? (raw >> 8) & 0xff : -1,
            stdout: Array((try? Data(contentsOf: URL(fileURLWithPath: outPath))) ?? Data()),
            stderr: String(decoding: (try? Data(contentsOf: URL(fileURLWithPath: errPath))) ?? Data(), as: UTF8.self)
        )
    }

    /// Starts `/usr/bin/env arguments…` with the three standard streams opened on the given files, an empty signal
    /// mask and default handlers (a test thread's blocked signals must not reach the child).
    private static func spawn(
        _ arguments: [String], environment: [String: String]?, stdin: String, stdout: String, stderr: String
    ) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, stdin, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGINT, SIGTERM, SIGPIPE, SIGHUP, SIGCHLD] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = (["/usr/bin/env"] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let environmentLines = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        let envp = environmentLines.map { strdup($0) } + [nil]
        defer { envp.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, "/usr/bin/env", &actions, &attributes, argv, envp)
        guard rc == 0 else { throw SpawnFailure(command: arguments.first ?? "", code: rc) }
        return pid
    }
}
