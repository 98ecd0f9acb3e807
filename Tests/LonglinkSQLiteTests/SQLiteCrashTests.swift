import Foundation
import Glibc
import LonglinkCore
import LonglinkTestSupport
import Testing
@testable import LonglinkSQLite

/// Every change the store acknowledged survives `kill -9` of the writing process.
@Suite("SQLiteOrderStore crash durability")
struct SQLiteCrashTests {
    @Test("every acknowledged change survives SIGKILL mid-stream", arguments: [100, 1_000])
    func killNine(batchSize: Int) throws {
        let writer = try #require(Self.crashWriterPath(), "longlink-sqlite-crash-writer not built; run `swift build`")
        let directory = TestDirectory()
        let path = directory.file("crash.sqlite")
        let child = try ChildProcess(writer, [path, "\(batchSize)", "2000000", "60"])
        defer { child.killAndReap() }

        // Read acknowledged lines for at most 10 s or until 4,000, then kill the writer mid-stream.
        var text = ""
        var acknowledged: [(order: String, offset: UInt64, state: String)] = []
        let deadline = MonotonicClock.nanoseconds() + 10_000_000_000
        while acknowledged.count < 4_000 && MonotonicClock.nanoseconds() < deadline {
            guard let chunk = child.read(timeoutMillis: 500) else { break }  // EOF: the writer stopped
            text += chunk
            while let newline = text.firstIndex(of: "\n") {
                let parts = text[..<newline].split(separator: " ")
                text = String(text[text.index(after: newline)...])
                if parts.count == 3, let offset = UInt64(parts[1]) {
                    acknowledged.append((String(parts[0]), offset, String(parts[2])))
                } else {
                    Issue.record("unexpected line from the writer: \(parts)")
                }
            }
        }
        #expect(child.isRunning, "the writer must still be writing when it is killed")
        let status = child.killAndReap()
        #expect(status.killedBySignal == SIGKILL)
        #expect(acknowledged.count > 0)

        // Reopen (SQLite replays the WAL) and look for every acknowledged change.
        let store = try SQLiteOrderStore(path: path)
        defer { store.shutdown() }
        try store.verifyIntegrity()
        var missing = 0
        for ack in acknowledged {
            let position = StreamPosition(epoch: store.epoch, offset: ack.offset - 1)
            let read = try store.records(of: .taxi, OrderFixtures.id(ack.order), after: position, limit: 1)
            guard case .records(let records) = read, let record = records.first,
                record.position.offset == ack.offset, record.toState.name == ack.state
            else {
                missing += 1
                continue
            }
        }
        #expect(missing == 0, "\(missing) of \(acknowledged.count) acknowledged changes are missing")
    }

    /// The crash writer next to the running test binary (`.build/<triple>/debug/`), or under the package's
    /// `.build/debug/`.
    static func crashWriterPath() -> String? {
        let name = "longlink-sqlite-crash-writer"
        var candidates: [String] = []
        if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            candidates.append("\(SQLiteDatabase.directory(of: executable))/\(name)")
        }
        let testFile = "\(#filePath)"  // <package>/Tests/LonglinkSQLiteTests/SQLiteCrashTests.swift
        let package = SQLiteDatabase.directory(of: SQLiteDatabase.directory(of: SQLiteDatabase.directory(of: testFile)))
        candidates.append("\(package)/.build/debug/\(name)")
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}

/// A child process with its stdout on a pipe, spawned with posix_spawn.
final class ChildProcess {
    let pid: pid_t
    private let stdoutFD: Int32
    private var reaped: Int32?

    init(_ executable: String, _ arguments: [String]) throws {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_addclose(&actions, fds[0])
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        close(fds[1])
        guard rc == 0 else {
            close(fds[0])
            throw POSIXError(POSIXErrorCode(rawValue: rc) ?? .EIO)
        }
        self.pid = pid
        self.stdoutFD = fds[0]
    }

    deinit {
        killAndReap()
        close(stdoutFD)
    }

    /// Up to 64 KiB of stdout; "" when nothing came within the timeout; nil at end of file.
    func read(timeoutMillis: Int32) -> String? {
        var poller = pollfd(fd: stdoutFD, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, timeoutMillis) > 0 else { return "" }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let n = buffer.withUnsafeMutableBytes { Glibc.read(stdoutFD, $0.baseAddress, $0.count) }
        if n < 0 { return errno == EINTR ? "" : nil }
        return n == 0 ? nil : String(decoding: buffer[..<n], as: UTF8.self)
    }

    /// Whether the child has not exited yet.
    var isRunning: Bool {
        guard reaped == nil else { return false }
        var status: Int32 = 0
        let rc = waitpid(pid, &status, WNOHANG)
        if rc == pid { reaped = status }
        return rc == 0
    }

    /// Sends SIGKILL (if still running) and waits for the child; returns its wait status.
    @discardableResult
    func killAndReap() -> WaitStatus {
        if let reaped { return WaitStatus(raw: reaped) }
        kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        reaped = status
        return WaitStatus(raw: status)
    }

    /// A `waitpid` status.
    struct WaitStatus {
        let raw: Int32
        /// The signal that ended the process, or nil when it exited.
        var killedBySignal: Int32? {
            let signal = raw & 0x7F
            return signal != 0 && signal != 0x7F ? signal : nil
        }
    }
}
