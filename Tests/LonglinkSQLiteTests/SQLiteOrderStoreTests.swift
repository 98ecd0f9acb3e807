import LonglinkCore
import LonglinkTestSupport
import Testing
@testable import LonglinkSQLite

@Suite("SQLiteOrderStore", .ownThreads)
struct SQLiteOrderStoreTests {
    @Test("keeps the OrderStore contract", arguments: OrderStoreContract.checks)
    func contract(_ check: OrderStoreContractCheck) throws {
        try check.run(.sqlite)
    }

    @Test("creates the schema at the latest version, in WAL mode, with a non-zero epoch")
    func schema() throws {
        let directory = TestDirectory()
        let store = try SQLiteOrderStore(path: directory.file("s.sqlite"))
        defer { store.shutdown() }
        #expect(store.epoch != 0)
        #expect(try SQLiteSchema.appliedVersions(store.database.connection) == Array(1...SQLiteSchema.latestVersion))
        #expect(store.database.versionBeforeOpen == 0)
        #expect(try store.database.connection.scalarText("PRAGMA journal_mode") == "wal")
        #expect(try store.database.connection.scalarInt("PRAGMA synchronous") == 1)  // NORMAL
        let full = try SQLiteOrderStore(path: directory.file("f.sqlite"), synchronous: .full)
        defer { full.shutdown() }
        #expect(try full.database.connection.scalarInt("PRAGMA synchronous") == 2)  // FULL
    }

    @Test("keeps its epoch and schema across reopen")
    func epochAcrossReopen() throws {
        let directory = TestDirectory()
        let path = directory.file("e.sqlite")
        let first = try SQLiteOrderStore(path: path)
        let epoch = first.epoch
        _ = try first.apply(OrderFixtures.change("1", BuiltInLines.created))
        first.shutdown()
        let second = try SQLiteOrderStore(path: path)
        defer { second.shutdown() }
        #expect(second.epoch == epoch)
        #expect(second.database.versionBeforeOpen == SQLiteSchema.latestVersion)
        let snapshot = try second.snapshot(of: .taxi, OrderFixtures.id("1"))
        #expect(snapshot?.position == StreamPosition(epoch: epoch, offset: 1))
        // A new file is a new history: another epoch.
        let other = try SQLiteOrderStore(path: directory.file("other.sqlite"))
        defer { other.shutdown() }
        #expect(other.epoch != epoch)
    }

    @Test("applies a new migration once, in order, and keeps the data of the versions before")
    func migration() throws {
        let directory = TestDirectory()
        let path = directory.file("m.sqlite")
        let v1 = try SQLiteOrderStore(path: path)
        _ = try v1.apply(OrderFixtures.change("1", BuiltInLines.created))
        v1.shutdown()
        let latest = SQLiteSchema.latestVersion
        let v2 = SQLiteSchema.Migration(
            version: latest + 1,
            summary: "test: driver ratings",
            sql: "CREATE TABLE driver_rating (driver_id TEXT PRIMARY KEY, rating INTEGER NOT NULL)"
        )
        func open() throws(StoreError) -> SQLiteOrderStore {
            try SQLiteOrderStore(
                path: path,
                catalog: .builtIn,
                retention: .standard,
                clock: SystemWallClock(),
                synchronous: .normal,
                migrations: SQLiteSchema.migrations + [v2]
            )
        }
        let migrated = try open()
        #expect(migrated.database.versionBeforeOpen == latest)
        #expect(try SQLiteSchema.appliedVersions(migrated.database.connection) == Array(1...latest + 1))
        #expect(try migrated.database.connection.scalarInt("SELECT COUNT(*) FROM driver_rating") == 0)
        #expect(try migrated.snapshot(of: .taxi, OrderFixtures.id("1")) != nil)
        migrated.shutdown()
        let again = try open()
        #expect(again.database.versionBeforeOpen == latest + 1)
        again.shutdown()
        // A build that only knows the versions before refuses the newer file instead of misreading it.
        let error = SQLiteTesting.error { () throws(StoreError) in try SQLiteOrderStore(path: path) }
        #expect(SQLiteTesting.isStorage(error, mentioning: "schema version \(latest + 1)", "newer Longlink"))
    }

    @Test("a second connection's commits are seen by the next batch (the writer's cache is dropped)")
    func secondConnection() throws {
        let directory = TestDirectory()
        let path = directory.file("two.sqlite")
        let first = try SQLiteOrderStore(path: path)
        defer { first.shutdown() }
        let second = try SQLiteOrderStore(path: path)
        defer { second.shutdown() }
        #expect(first.epoch == second.epoch)
        let lifecycle = OrderFixtures.taxiLifecycle("shared")
        _ = try first.apply(lifecycle[0])  // cached by `first`
        _ = try second.apply(lifecycle[1])
        let third = try first.apply(lifecycle[2])
        #expect(third.record.position.offset == 3)
        #expect(third.record.fromState == BuiltInLines.dispatching)
    }

    @Test("expire ages history out by timestamp, keeps each order's latest record, and ages later records too")
    func agingAcrossExpires() throws {
        let directory = TestDirectory()
        let clock = ManualWallClock()
        let retention = StoreRetention(maxHistoryAgeMillis: 10_000, terminalOrderTTLMillis: 1_000_000)
        let store = try SQLiteOrderStore(path: directory.file("age.sqlite"), retention: retention, clock: clock)
        defer { store.shutdown() }
        /// Offsets retained after `offset`, nil when the read is expired.
        func offsets(after offset: UInt64) throws -> [UInt64]? {
            let position = StreamPosition(epoch: store.epoch, offset: offset)
            switch try store.records(of: .taxi, OrderFixtures.id("aging"), after: position, limit: 10) {
            case .records(let records): return records.map(\.position.offset)
            case .expired: return nil
            }
        }
        let lifecycle = OrderFixtures.taxiLifecycle("aging")
        for change in lifecycle.prefix(3) {
            _ = try store.apply(change)
            clock.advance(byMillis: 1_000)
        }
        // Records at t0, t0+1s, t0+2s; now t0+3s. At t0+11.5s the first two are older than 10 s; the latest stays.
        clock.advance(byMillis: 8_500)
        #expect(try store.expire(nowMillis: clock.nowMillis()) == 0)
        #expect(try offsets(after: 2) == [3])
        #expect(try offsets(after: 1) == nil)
        // Newer records age out on a later expire too.
        _ = try store.apply(lifecycle[3])
        _ = try store.apply(lifecycle[4])
        clock.advance(byMillis: 20_000)
        _ = try store.expire(nowMillis: clock.nowMillis())
        #expect(try offsets(after: 4) == [5])
        #expect(try store.retainedHistory(of: .taxi, OrderFixtures.id("aging"))?.history.map(\.position.offset) == [5])
        #expect(try offsets(after: 3) == nil)
    }

    @Test("a batch with good and bad changes stores exactly the good ones")
    func groupCommit() throws {
        let directory = TestDirectory()
        let path = directory.file("g.sqlite")
        let store = try SQLiteOrderStore(path: path)
        let tooBig = OrderFields(payload: [UInt8](repeating: 1, count: 20_000))
        let batch = [
            OrderFixtures.change("a", BuiltInLines.created),
            OrderFixtures.change("a", BuiltInLines.paid),  // illegal: created → paid
            OrderFixtures.change("b", BuiltInLines.dispatching),  // unknown order
            OrderFixtures.change("a", BuiltInLines.dispatching, key: "k1"),
            OrderFixtures.change("a", BuiltInLines.dispatching, key: "k1"),  // replay within the batch
            OrderFixtures.change("c", BuiltInLines.created, fields: tooBig),
            OrderFixtures.change("d", BuiltInLines.created),
        ]
        let results = store.applyBatch(batch)
        #expect(results.count == batch.count)
        let stored = results.map { (try? $0.get()).map { $0.deduplicated ? "dup" : "ok" } ?? "refused" }
        #expect(stored == ["ok", "refused", "refused", "ok", "dup", "refused", "ok"])
        store.shutdown()
        let reopened = try SQLiteOrderStore(path: path)
        defer { reopened.shutdown() }
        let orders = try reopened.orders(after: nil, limit: 10).map { "\($0.orderID)@\($0.position.offset)" }
        #expect(orders == ["a@2", "d@1"])
        let history = try #require(try OrderFixtures.history(reopened, .taxi, "a"))
        #expect(history.map(\.toState) == [BuiltInLines.created, BuiltInLines.dispatching])
    }
}
