import Foundation
import LonglinkCore
import LonglinkTestSupport
import Testing

@testable import LonglinkSQLite

@Suite("SQLite schema v2: feature toggles", .ownThreads)
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
        #expect(throws: SQLiteError.self) { try old.database.connection.scalarInt("SELECT COUNT(*) FROM toggles") }  // no table yet
        let epoch = old.epoch
        old.shutdown()

        let migrated = try SQLiteOrderStore(path: path)
        defer { migrated.shutdown() }
        #expect(migrated.epoch == epoch)
        #expect(try migrated.snapshot(of: .taxi, OrderID("8812")!)?.state == "created")
        #expect(try migrated.database.connection.scalarInt("SELECT max(version) FROM schema_version") == 2)
        let toggles = try SQLiteToggleStore(path: path)
        defer { toggles.shutdown() }
        let toggle = try toggles.setToggle(app: "rider", name: "new_home", value: .rollout(percent: 10), nowMillis: 5)
        #expect(toggle.position == StreamPosition(epoch: epoch, offset: 1))
        #expect(SQLiteSchema.latestVersion == 2)
    }

    @Test("the toggle store opened first migrates a v1 file too, and the order store then opens it")
    func toggleStoreMigratesV1() throws {
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
        let epoch = old.epoch
        old.shutdown()
        let toggles = try SQLiteToggleStore(path: path)
        defer { toggles.shutdown() }
        #expect(toggles.epoch == epoch)
        #expect(try toggles.toggles(app: nil).isEmpty)
        #expect(try toggles.setToggle(app: "rider", name: "new_home", value: .bool(true), nowMillis: 1).position.offset == 1)
        let orders = try SQLiteOrderStore(path: path)
        defer { orders.shutdown() }
        #expect(try orders.snapshot(of: .taxi, OrderID("8812")!)?.state == "created")
    }

    /// `Fixtures/toggles-v2-before-toggle-store.sqlite` was written by `longlink serve --store sqlite:…` built from
    /// the code where toggles were part of `SQLiteOrderStore` (main at ecd0863), with four admin `PUT`s:
    /// rider/new_home true then 25%, driver/map.style "night: a/b", rider/dark false.
    @Test("a file whose toggles the order store wrote (before the toggle seam) opens with every toggle as it was")
    func opensFilesWrittenBeforeTheSeam() throws {
        let fixture = try #require(Bundle.module.url(forResource: "toggles-v2-before-toggle-store", withExtension: "sqlite", subdirectory: "Fixtures"))
        let directory = TestDirectory()
        let path = directory.file("old.sqlite")
        try FileManager.default.copyItem(atPath: fixture.path, toPath: path)
        let epoch: UInt32 = 3_401_485_455
        let orders = try SQLiteOrderStore(path: path)
        defer { orders.shutdown() }
        #expect(orders.epoch == epoch)
        let reader = try SQLiteToggleStore(readingExisting: path)
        let expected = [
            ("driver", "map.style", ToggleValue.string("night: a/b"), UInt64(1), UInt64(1_796_151_153_624)),
            ("rider", "dark", .bool(false), 1, 1_796_151_153_644),
            ("rider", "new_home", .rollout(percent: 25), 2, 1_796_151_153_577),
        ].map { FeatureToggle(app: $0.0, name: $0.1, value: $0.2, position: StreamPosition(epoch: epoch, offset: $0.3), updatedAtMillis: $0.4) }
        #expect(try reader.toggles(app: nil) == expected)
        reader.shutdown()
        let toggles = try SQLiteToggleStore(path: path)
        defer { toggles.shutdown() }
        #expect(try toggles.toggles(app: "rider").map(\.name) == ["dark", "new_home"])
        let next = try toggles.setToggle(app: "rider", name: "new_home", value: .bool(true), nowMillis: 1_796_151_200_000)
        #expect(next.position == StreamPosition(epoch: epoch, offset: 3))
    }
}
