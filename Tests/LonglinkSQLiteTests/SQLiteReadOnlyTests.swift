import Foundation
import LonglinkCore
import LonglinkTestSupport
import Testing

@testable import LonglinkSQLite

@Suite("SQLiteOrderStore opened read-only (a migration's source)", .ownThreads)
struct SQLiteReadOnlyTests {
    @Test("reads orders, history and toggles; refuses writes; leaves the file as it was")
    func readsAndRefusesWrites() throws {
        let directory = TestDirectory()
        let path = directory.file("source.sqlite")
        let writer = try SQLiteOrderStore(path: path)
        for change in OrderFixtures.taxiLifecycle("r1").prefix(3) { _ = try writer.apply(change) }
        let toggles = try SQLiteToggleStore(path: path)
        let toggle = try toggles.setToggle(app: "rider", name: "new_home", value: .bool(true), nowMillis: 5)
        toggles.shutdown()
        let epoch = writer.epoch
        writer.shutdown()
        let before = try Data(contentsOf: URL(fileURLWithPath: path))

        let reader = try SQLiteOrderStore(readingExisting: path)
        #expect(reader.epoch == epoch)
        #expect(try reader.retainedHistory(of: .taxi, OrderFixtures.id("r1"))?.history.count == 3)
        let toggleReader = try SQLiteToggleStore(readingExisting: path)
        #expect(toggleReader.epoch == epoch)
        #expect(try toggleReader.toggles(app: nil) == [toggle])
        let refused = OrderFixtures.storeError { () throws(StoreError) in
            try reader.apply(OrderFixtures.change("r2", BuiltInLines.created))
        }
        guard case .storage(let why, _) = refused else {
            Issue.record("expected a storage error, got \(String(describing: refused))")
            return
        }
        #expect(why.contains("read-only"), "\(why)")
        #expect(OrderFixtures.storeError { () throws(StoreError) in try toggleReader.setToggle(app: "a", name: "b", value: .bool(true), nowMillis: 1) } != nil)
        toggleReader.shutdown()
        reader.shutdown()
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    @Test("a v1 file is read as it is, without migrating it (no toggles)")
    func readsV1WithoutMigrating() throws {
        let directory = TestDirectory()
        let path = directory.file("v1.sqlite")
        let old = try SQLiteOrderStore(
            path: path,
            catalog: .builtIn,
            retention: .standard,
            clock: SystemWallClock(),
            synchronous: .normal,
            migrations: [SQLiteSchema.version1]
        )
        _ = try old.apply(OrderFixtures.change("v1", BuiltInLines.created))
        old.shutdown()
        let reader = try SQLiteOrderStore(readingExisting: path)
        #expect(try reader.snapshot(of: .taxi, OrderFixtures.id("v1"))?.state == BuiltInLines.created)
        let toggleReader = try SQLiteToggleStore(readingExisting: path)
        #expect(try toggleReader.toggles(app: nil).isEmpty)
        toggleReader.shutdown()
        #expect(reader.database.schemaVersion == 1)
        reader.shutdown()
        let again = try SQLiteOrderStore(readingExisting: path)
        defer { again.shutdown() }
        #expect(try again.database.connection.scalarInt("SELECT MAX(version) FROM schema_version") == 1)
    }

    @Test("a missing file, an empty file and a foreign database are refused naming the path, and nothing is created")
    func refusesWhatIsNotAStore() throws {
        let directory = TestDirectory()
        let missing = directory.file("sub/nosuch.sqlite")
        let empty = directory.file("empty.sqlite")
        _ = FileManager.default.createFile(atPath: empty, contents: Data())
        for (path, words) in [(missing, "does not exist"), (empty, "not a Longlink store")] {
            let error = OrderFixtures.storeError { () throws(StoreError) in try SQLiteOrderStore(readingExisting: path) }
            guard case .storage(let why, retryable: false) = error else {
                Issue.record("expected a storage error for \(path), got \(String(describing: error))")
                continue
            }
            #expect(why.contains(path) && why.contains(words), "\(why)")
        }
        #expect(!FileManager.default.fileExists(atPath: directory.file("sub")))
        #expect(try FileManager.default.attributesOfItem(atPath: empty)[.size] as? Int == 0)
    }
}
