import Foundation
import Glibc
import LonglinkCore
import LonglinkTestSupport
import Testing
@testable import LonglinkSQLite

/// Every change the store acknowledged survives `kill -9` of the writing process.
@Suite("SQLiteOrderStore crash durability", .ownThreads)
struct SQLiteCrashTests {
    @Test("every acknowledged change survives SIGKILL mid-stream", arguments: [100, 1_000])
    func killNine(batchSize: Int) throws {
        let writer = try #require(Self.crashWriterPath(), "longlink-sqlite-crash-writer not built; run `swift build`")
        let directory = TestDirectory()
        let path = directory.file("crash.sqlite")
        let child = try ChildProcess(writer, [path, "\(batchSize)", "2000000", "60"], standardOutput: directory.file("acknowledged"))
        defer { child.kill() }

        // Read acknowledged lines for at most 10 s or until 4,000, then kill the writer mid-stream.
        var text = ""
        var consumed = 0
        var acknowledged: [(order: String, offset: UInt64, state: String)] = []
        let deadline = MonotonicClock.nanoseconds() + 10_000_000_000
        while acknowledged.count < 4_000 && MonotonicClock.nanoseconds() < deadline {
            // Up to 64 KiB of what the writer appended to its stdout file since the last look.
            let chunk = child.standardOutputBytes(from: consumed).prefix(65_536)
            if chunk.isEmpty {
                guard child.isRunning else { break }  // the writer stopped
                usleep(5_000)
                continue
            }
            consumed += chunk.count
            text += String(decoding: chunk, as: UTF8.self)
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
        let status = child.kill()
        #expect(status.signal == SIGKILL)
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
