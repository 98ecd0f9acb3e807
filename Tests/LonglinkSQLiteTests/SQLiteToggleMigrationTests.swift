import LonglinkCore
import LonglinkTestSupport
import Testing

@testable import LonglinkSQLite

@Suite("SQLite schema v2: feature toggles")
struct SQLiteToggleMigrationTests {
    @Test("a v1 database is migrated to v2 on open: orders kept, toggles usable, version recorded")
    func migratesV1() throws {
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
        _ = try old.apply(OrderChange(orderID: OrderID("8812")!, line: .taxi, targetState: "created"))
        #expect(throws: StoreError.self) { try old.toggles(app: nil) }  // no table yet
        let epoch = old.epoch
        old.shutdown()

        let migrated = try SQLiteOrderStore(path: path)
        defer { migrated.shutdown() }
        #expect(migrated.epoch == epoch)
        #expect(try migrated.snapshot(of: .taxi, OrderID("8812")!)?.state == "created")
        #expect(try migrated.database.connection.scalarInt("SELECT max(version) FROM schema_version") == 2)
        let toggle = try migrated.setToggle(app: "rider", name: "new_home", value: .rollout(percent: 10), nowMillis: 5)
        #expect(toggle.position == StreamPosition(epoch: epoch, offset: 1))
        #expect(SQLiteSchema.latestVersion == 2)
    }
}
