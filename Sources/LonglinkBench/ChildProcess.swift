import Foundation
import Glibc
import Synchronization

/// A child process started with `posix_spawn`, its stdout and stderr going to a log file, stopped by its PID.
///
/// The signal mask is reset in the child: `longlink` blocks SIGINT/SIGTERM in every thread to receive them
/// through a signalfd, and a blocked mask survives `exec`, which would make a child such as `redis-server` deaf to
/// SIGTERM.
public final class ChildProcess: Sendable {
    /// The child's process id.
    public let pid: Int32
    /// Where its stdout and stderr go.
    public let logPath: String
    private let reaped = Mutex<Int32?>(nil)

    /// Spawns `executable` with `arguments` (without argv[0]); stderr goes to `errorPath` when given, else to the log.
    public init(executable: String, arguments: [String], logPath: String, errorPath: String? = nil) throws {
        // No O_CLOEXEC on these opens: they happen in the child, and glibc keeps the flag when the file lands on
        // the wanted fd directly, which would close stdout/stderr at exec.
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, logPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        if let errorPath {
            posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        } else {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGINT, SIGTERM, SIGHUP, SIGPIPE] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: Int32 = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        guard result == 0 else {
            throw BenchError("cannot start \(executable): \(String(cString: strerror(result)))")
        }
        self.pid = pid
        self.logPath = logPath
    }

    deinit { stop(grace: .milliseconds(500)) }

    /// Whether the child is still running (reaps it when it has exited).
    public var isRunning: Bool {
        reaped.withLock { reaped in
            guard reaped == nil else { return false }
            var status: Int32 = 0
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid { reaped = status }
            return result == 0
        }
    }

    /// What the child wrote so far.
    public var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Waits until the child exits by itself, at most `timeout`; true when it did.
    public func waitForExit(timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while isRunning {
            guard ContinuousClock.now < deadline else { return false }
            usleep(10_000)
        }
        return true
    }

    /// Sends `signal` to the child.
    public func signal(_ signal: Int32) {
        guard isRunning else { return }
        kill(pid, signal)
    }

    /// SIGTERM, then SIGKILL if it has not exited after `grace`; waits for it.
    public func stop(grace: Duration = .seconds(5)) {
        guard isRunning else { return }
        kill(pid, SIGTERM)
        let deadline = ContinuousClock.now + grace
        while isRunning && ContinuousClock.now < deadline { usleep(10_000) }
        reaped.withLock { reaped in
            guard reaped == nil else { return }
            kill(pid, SIGKILL)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            reaped = status
        }
    }
}

/// A failure of the benchmark harness itself (a server that does not start, a bad flag combination).
public struct BenchError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public var message: String
    /// Creates an error.
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
