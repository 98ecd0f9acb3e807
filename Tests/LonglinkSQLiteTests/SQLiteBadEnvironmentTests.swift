import Foundation
import LonglinkCore
import LonglinkTestSupport
import Testing
@testable import LonglinkSQLite

/// Damaged files and hostile environments: each gives a clear `StoreError.storage`, never a crash, and never
/// damages acknowledged data.
@Suite("SQLiteOrderStore in a bad environment", .ownThreads)
struct SQLiteBadEnvironmentTests {
    static let isRoot = geteuid() == 0

    @Test("a file of garbage is refused as corrupt or not a database")
    func garbageFile() throws {
        let directory = TestDirectory()
        let path = directory.file("garbage.sqlite")
        var generator = SystemRandomNumberGenerator()
        let garbage = (0..<65_536).map { _ in UInt8.random(in: 0...255, using: &generator) }
        #expect(FileManager.default.createFile(atPath: path, contents: Data(garbage)))
        let error = SQLiteTesting.error { () throws(StoreError) in try SQLiteOrderStore(path: path) }
        #expect(SQLiteTesting.isStorage(error, mentioning: "garbage.sqlite", "not a database", "backup"))
        #expect(error.map { if case .storage(_, let retryable) = $0 { retryable } else { true } } == false)
        // The file was not touched.
        #expect(FileManager.default.contents(atPath: path) == Data(garbage))
    }

    @Test("garbage written over a store's pages is reported by reads and by the integrity check")
    func damagedPages() throws {
        let directory = TestDirectory()
        let path = directory.file("damaged.sqlite")
        let store = try SQLiteOrderStore(path: path)
        for i in 0..<2_000 {
            let fields = OrderFields(payload: [UInt8](repeating: 7, count: 200))
            _ = try store.apply(OrderFixtures.change("o\(i)", BuiltInLines.created, fields: fields))
        }
        store.shutdown()  // checkpoints the WAL into the file
        let handle = try #require(FileHandle(forWritingAtPath: path))
        let size = try handle.seekToEnd()
        let half = size / 2 / 4_096 * 4_096  // keep the first half (header, schema, meta), wreck the rest
        try handle.seek(toOffset: half)
        try handle.write(contentsOf: Data(repeating: 0xA5, count: Int(size - half)))
        try handle.close()

        // Opening may succeed (it reads the first pages only); every read or write that meets a bad page fails
        // cleanly.
        let reopened: SQLiteOrderStore
        do {
            reopened = try SQLiteOrderStore(path: path)
        } catch {
            #expect(SQLiteTesting.isStorage(error, mentioning: "corrupt"))
            return
        }
        defer { reopened.shutdown() }
        let read = SQLiteTesting.error { () throws(StoreError) in try reopened.orders(after: nil, limit: 10_000) }
        #expect(SQLiteTesting.isStorage(read, mentioning: "corrupt"))
        let write = SQLiteTesting.error { () throws(StoreError) in
            try reopened.apply(OrderFixtures.change("new", BuiltInLines.created))
        }
        #expect(SQLiteTesting.isStorage(write))
        let check = SQLiteTesting.error { () throws(StoreError) in try reopened.verifyIntegrity() }
        #expect(SQLiteTesting.isStorage(check))
    }

    @Test("a read-only database file is refused with what to do")
    func readOnlyFile() throws {
        let directory = TestDirectory()
        let path = directory.file("ro.sqlite")
        try SQLiteOrderStore(path: path).shutdown()
        chmod(path, 0o444)
        // Root ignores permission bits; the immutable attribute stops root too.
        let immutable = Self.isRoot && SQLiteTesting.run("/usr/bin/chattr", ["+i", path]) == 0
        defer { if immutable { _ = SQLiteTesting.run("/usr/bin/chattr", ["-i", path]) } }
        if Self.isRoot && !immutable { return }  // cannot make the file read-only here
        let error = SQLiteTesting.error { () throws(StoreError) in try SQLiteOrderStore(path: path) }
        #expect(SQLiteTesting.isStorage(error, mentioning: "ro.sqlite", "read-only", "writable"))
    }

    @Test("a read-only directory is refused with what to do")
    func readOnlyDirectory() throws {
        let directory = TestDirectory()
        let inner = directory.file("locked")
        try FileManager.default.createDirectory(atPath: inner, withIntermediateDirectories: false)
        chmod(inner, 0o555)
        let immutable = Self.isRoot && SQLiteTesting.run("/usr/bin/chattr", ["+i", inner]) == 0
        defer { if immutable { _ = SQLiteTesting.run("/usr/bin/chattr", ["-i", inner]) } }
        if Self.isRoot && !immutable { return }
        let error = SQLiteTesting.error { () throws(StoreError) in
            try SQLiteOrderStore(path: "\(inner)/new.sqlite")
        }
        #expect(SQLiteTesting.isStorage(error, mentioning: "new.sqlite", "directory"))
    }

    @Test("a missing directory is named in the error")
    func missingDirectory() {
        let directory = TestDirectory()
        let path = directory.file("nope/deeper/store.sqlite")
        let error = SQLiteTesting.error { () throws(StoreError) in try SQLiteOrderStore(path: path) }
        let named = "\(directory.path)/nope/deeper"
        #expect(SQLiteTesting.isStorage(error, mentioning: named, "does not exist", "create it"))
    }

    @Test("a full database (max_page_count) fails writes retryably and keeps acknowledged data")
    func fullDatabase() throws {
        let directory = TestDirectory()
        let path = directory.file("full.sqlite")
        let store = try SQLiteOrderStore(path: path)
        let pages = try #require(try store.database.connection.scalarInt("PRAGMA page_count"))
        try store.database.setMaxPageCount(Int(pages) + 20)
        let acknowledged = try Self.fill(store, until: "full")
        #expect(acknowledged > 0)
        // Room again: writes work, and everything acknowledged before is there.
        try store.database.setMaxPageCount(1_000_000)
        _ = try store.apply(OrderFixtures.change("after-full", BuiltInLines.created))
        // The first refused order was never stored, whatever the writer's cache saw during the failed batch.
        let retried = try store.apply(OrderFixtures.change("o\(acknowledged)", BuiltInLines.created))
        #expect(retried.record.position.offset == 1)
        store.shutdown()
        try Self.expectStored(acknowledged + 1, at: path)
    }

    @Test("a full disk (a small tmpfs, when this process may mount one) fails writes and keeps acknowledged data")
    func fullDisk() throws {
        guard Self.isRoot else { return }
        let directory = TestDirectory()
        let mountPoint = directory.file("tmpfs")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: false)
        guard SQLiteTesting.run("/usr/bin/mount", ["-t", "tmpfs", "-o", "size=2m", "tmpfs", mountPoint]) == 0 else {
            return  // no CAP_SYS_ADMIN here: fullDatabase covers the logic
        }
        defer { _ = SQLiteTesting.run("/usr/bin/umount", [mountPoint]) }
        let path = "\(mountPoint)/disk.sqlite"
        let acknowledged: Int
        do {
            let store = try SQLiteOrderStore(path: path)
            defer { store.shutdown() }
            acknowledged = try Self.fill(store, until: "full")
        }
        #expect(acknowledged > 0)
        try Self.expectStored(acknowledged, at: path)
    }

    @Test("a write that fails in the middle of a batch refuses that change only; the others are stored")
    func oneFailingWriteInABatch() throws {
        let directory = TestDirectory()
        let path = directory.file("one-fails.sqlite")
        let store = try SQLiteOrderStore(path: path)
        _ = try store.apply(OrderFixtures.change("warm", BuiltInLines.created))
        let pages = try #require(try store.database.connection.scalarInt("PRAGMA page_count"))
        // Room for small rows, not for 16 KiB of payload (four more 4 KiB pages and then some).
        try store.database.setMaxPageCount(Int(pages) + 3)
        let huge = OrderFields(payload: [UInt8](repeating: 7, count: OrderFields.maxPayloadBytes))
        let results = store.applyBatch([
            OrderFixtures.change("small-1", BuiltInLines.created),
            OrderFixtures.change("huge", BuiltInLines.created, fields: huge),
            OrderFixtures.change("small-2", BuiltInLines.created),
        ])
        #expect((try? results[0].get()) != nil)
        #expect(SQLiteTesting.isStorage(SQLiteTesting.failure(results[1]), mentioning: "full"))
        #expect((try? results[2].get()) != nil)
        store.shutdown()
        let reopened = try SQLiteOrderStore(path: path)
        defer { reopened.shutdown() }
        #expect(try reopened.snapshot(of: .taxi, OrderID("small-1")!) != nil)
        #expect(try reopened.snapshot(of: .taxi, OrderID("huge")!) == nil)
        #expect(try reopened.snapshot(of: .taxi, OrderID("small-2")!) != nil)
    }

    /// Applies batches of orders with 8 KiB payloads until a batch fails with a storage error mentioning
    /// `expected`; checks every result of that batch is a storage error; returns how many were acknowledged.
    static func fill(_ store: SQLiteOrderStore, until expected: String) throws -> Int {
        var acknowledged = 0
        for round in 0..<500 {
            let batch = (0..<10).map { i in
                OrderFixtures.change(
                    "o\(round * 10 + i)",
                    BuiltInLines.created,
                    fields: OrderFields(payload: [UInt8](repeating: UInt8(i), count: 8_192))
                )
            }
            let results = store.applyBatch(batch)
            let failures = results.compactMap { result -> StoreError? in
                if case .failure(let error) = result { error } else { nil }
            }
            guard !failures.isEmpty else {
                    acknowledged += results.count
                continue
            }
            for (offset, result) in results.enumerated() {
                switch result {
                case .success: acknowledged += 1
                case .failure(let error):
                    #expect(SQLiteTesting.isStorage(error, mentioning: expected), "change \(offset): \(error)")
                    if case .storage(_, let retryable) = error { #expect(retryable) }
                }
            }
            // Stored changes form a prefix of the batch: once the disk is full, later ones fail too.
            #expect(results.prefix { (try? $0.get()) != nil }.count == acknowledged - round * 10)
            return acknowledged
        }
        Issue.record("the store never filled up")
        return acknowledged
    }

    /// Reopens `path` and checks orders o0 … o(count-1) are stored, the file is sound and o(count) is not.
    static func expectStored(_ count: Int, at path: String) throws {
        let reopened = try SQLiteOrderStore(path: path)
        defer { reopened.shutdown() }
        try reopened.verifyIntegrity()
        for i in 0..<count {
            #expect(try reopened.snapshot(of: .taxi, OrderFixtures.id("o\(i)")) != nil, "o\(i) was acknowledged")
        }
        #expect(try reopened.snapshot(of: .taxi, OrderFixtures.id("o\(count)")) == nil)
    }
}
