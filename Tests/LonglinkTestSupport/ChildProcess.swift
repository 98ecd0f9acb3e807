import Foundation
import Glibc
import Synchronization

/// A child process for tests, started with `posix_spawn` and reaped with `waitpid` on its own PID only.
///
/// Not Foundation's `Process`: inside the parallel suite `Process` can miss a child's exit (the child stays a
/// zombie, `isRunning` stays true and `waitUntilExit` never returns), which hung a whole `swift test` run. The
/// child gets an empty signal mask and default handlers for SIGINT, SIGTERM, SIGPIPE, SIGHUP and SIGCHLD (a test
/// thread's blocked or ignored signals must not reach it), and only descriptors 0, 1 and 2: stdin from /dev/null
/// or a file, stdout and stderr to files (or /dev/null), which a test polls; no pipe a chatty child could fill.
/// Killed with SIGKILL and reaped when it goes away while still running.
public final class ChildProcess: Sendable {
    /// How a child ended.
    public enum Termination: Sendable, Equatable, CustomStringConvertible {
        /// It exited with this status.
        case exited(Int32)
        /// A signal ended it.
        case signaled(Int32)
        /// Someone else reaped it (waitpid said ECHILD), so its status is unknown.
        case lost

        init(waitStatus raw: Int32) {
            let signal = raw & 0x7f
            self = signal == 0 ? .exited((raw >> 8) & 0xff) : .signaled(signal)
        }

        /// The exit status, nil when a signal ended it.
        public var exitStatus: Int32? { if case .exited(let status) = self { status } else { nil } }

        /// The signal that ended it, nil when it exited.
        public var signal: Int32? { if case .signaled(let signal) = self { signal } else { nil } }

        /// The status a shell reports: the exit status, or 128 + the signal (-1 when lost).
        public var shellStatus: Int32 {
            switch self {
            case .exited(let status): status
            case .signaled(let signal): 128 + signal
            case .lost: -1
            }
        }

        public var description: String {
            switch self {
            case .exited(let status): "exit status \(status)"
            case .signaled(let signal): "killed by signal \(signal)"
            case .lost: "reaped elsewhere"
            }
        }
    }

    /// A child that could not be started.
    public struct SpawnFailure: Error, CustomStringConvertible {
        /// The executable.
        public var executable: String
        /// The errno posix_spawn returned.
        public var code: Int32
        public var description: String { "cannot start \(executable): \(String(cString: strerror(code)))" }
    }

    /// Its process id.
    public let pid: Int32
    /// The file its stdout goes to (nil: /dev/null).
    public let standardOutputPath: String?
    /// The file its stderr goes to (nil: /dev/null; may equal `standardOutputPath`).
    public let standardErrorPath: String?
    /// Whether it leads a process group of its own (its pid is the group id).
    public let leadsProcessGroup: Bool
    private let reaped = Mutex<Termination?>(nil)

    /// Starts `executable` (a path; a bare name is looked up in this process's PATH) with `arguments`.
    /// - Parameters:
    ///   - environment: the child's whole environment; nil inherits this process's.
    ///   - directory: the child's working directory; nil keeps this process's.
    ///   - standardInput: a file to read stdin from; nil is /dev/null.
    ///   - standardOutput, standardError: files (created or truncated) for stdout and stderr; the same path for
    ///     both gives one file in write order; nil is /dev/null.
    ///   - newProcessGroup: makes the child the leader of a new process group (`signal(_:toGroup:)`).
    public init(
        _ executable: String,
        _ arguments: [String] = [],
        environment: [String: String]? = nil,
        directory: String? = nil,
        standardInput: String? = nil,
        standardOutput: String? = nil,
        standardError: String? = nil,
        newProcessGroup: Bool = false
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, standardInput ?? "/dev/null", O_RDONLY, 0)
        let create = O_WRONLY | O_CREAT | O_TRUNC
        posix_spawn_file_actions_addopen(&actions, 1, standardOutput ?? "/dev/null", create, 0o644)
        if let standardError, standardError == standardOutput {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 2, standardError ?? "/dev/null", create, 0o644)
        }
        // After the opens, so relative file paths name the same files as in this process.
        if let directory { try Self.addChangeDirectory(&actions, directory, executable: executable) }
        Self.addCloseFrom(&actions, 3)

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
        var flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
        if newProcessGroup {
            flags |= POSIX_SPAWN_SETPGROUP
            posix_spawnattr_setpgroup(&attributes, 0)
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let envp = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer { envp?.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = (envp ?? []).withUnsafeBufferPointer { given in
            let environment = envp == nil ? UnsafePointer(environ) : given.baseAddress
            return executable.contains("/")
                ? posix_spawn(&pid, executable, &actions, &attributes, argv, environment)
                : posix_spawnp(&pid, executable, &actions, &attributes, argv, environment)
        }
        guard rc == 0 else { throw SpawnFailure(executable: executable, code: rc) }
        self.pid = pid
        self.standardOutputPath = standardOutput
        self.standardErrorPath = standardError
        self.leadsProcessGroup = newProcessGroup
    }

    deinit { _ = kill() }

    /// How it ended, once it has (reaps it without waiting); nil while it runs.
    public var termination: Termination? {
        reaped.withLock { reaped in
            if reaped == nil { reaped = Self.reap(pid, blocking: false) }
            return reaped
        }
    }

    /// Whether it still runs (reaps it once it exited).
    public var isRunning: Bool { termination == nil }

    /// Sends `signal` to it (to its whole process group with `toGroup`, when it leads one) unless it was already
    /// reaped; returns whether it was sent.
    @discardableResult
    public func signal(_ signal: Int32, toGroup: Bool = false) -> Bool {
        reaped.withLock { reaped in
            // Checked and sent under the lock: until it is reaped here, its pid cannot name another process.
            if reaped == nil { reaped = Self.reap(pid, blocking: false) }
            guard reaped == nil else { return false }
            return Glibc.kill(toGroup && leadsProcessGroup ? -pid : pid, signal) == 0
        }
    }

    /// Waits up to `timeout` for it to end; at the deadline it is killed with SIGKILL, reaped, and nil returned.
    public func waitForExit(timeout: Duration) -> Termination? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let termination { return termination }
            usleep(5_000)
        }
        if let termination { return termination }
        _ = kill()
        return nil
    }

    /// SIGTERM (to its process group with `toGroup`), then waits up to `timeout`; nil (and SIGKILL) if it did not end.
    public func terminate(timeout: Duration = .seconds(10), toGroup: Bool = false) -> Termination? {
        signal(SIGTERM, toGroup: toGroup)
        return waitForExit(timeout: timeout)
    }

    /// SIGKILL (to its process group too, when it leads one) unless it already ended, then reaps it.
    @discardableResult
    public func kill() -> Termination {
        reaped.withLock { reaped in
            if reaped == nil { reaped = Self.reap(pid, blocking: false) }
            if let reaped { return reaped }
            Glibc.kill(leadsProcessGroup ? -pid : pid, SIGKILL)
            let termination = Self.reap(pid, blocking: true) ?? .lost
            reaped = termination
            return termination
        }
    }

    /// Its stdout so far, as text ("" without a file).
    public var standardOutputText: String { Self.text(of: standardOutputPath) }

    /// Its stderr so far, as text ("" without a file).
    public var standardErrorText: String { Self.text(of: standardErrorPath) }

    /// The bytes of its stdout file from `offset` on (what it wrote since a reader last looked).
    public func standardOutputBytes(from offset: Int) -> [UInt8] {
        guard let path = standardOutputPath, let handle = FileHandle(forReadingAtPath: path) else { return [] }
        defer { try? handle.close() }
        guard (try? handle.seek(toOffset: UInt64(offset))) != nil else { return [] }
        return Array((try? handle.readToEnd()) ?? Data())
    }

    private static func text(of path: String?) -> String {
        guard let path, let data = FileManager.default.contents(atPath: path) else { return "" }
        return String(decoding: data, as: UTF8.self)
    }

    /// `waitpid` on `pid` alone: its termination, or nil while it runs (only without `blocking`).
    private static func reap(_ pid: pid_t, blocking: Bool) -> Termination? {
        var raw: Int32 = 0
        while true {
            let rc = waitpid(pid, &raw, blocking ? 0 : WNOHANG)
            if rc == pid { return Termination(waitStatus: raw) }
            if rc == 0 { return nil }
            if errno != EINTR { return .lost }
        }
    }

    // glibc 2.34+ has posix_spawn_file_actions_addclosefrom_np and 2.29+ posix_spawn_file_actions_addchdir_np, but
    // they are GNU extensions that Swift's Glibc module does not import; they are looked up by name instead.
    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private typealias AddChangeDirectory =
        @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32

    /// Closes every descriptor from `lowest` up in the child (a test's sockets must not live on in it), when the
    /// C library can.
    private static func addCloseFrom(_ actions: inout posix_spawn_file_actions_t, _ lowest: Int32) {
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return }
        _ = unsafeBitCast(symbol, to: AddCloseFrom.self)(&actions, lowest)
    }

    private static func addChangeDirectory(
        _ actions: inout posix_spawn_file_actions_t, _ directory: String, executable: String
    ) throws {
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addchdir_np") else {
            throw SpawnFailure(executable: executable, code: ENOSYS)
        }
        let rc = directory.withCString { unsafeBitCast(symbol, to: AddChangeDirectory.self)(&actions, $0) }
        guard rc == 0 else { throw SpawnFailure(executable: executable, code: rc) }
    }
}
