import LonglinkCore
import LonglinkTestSupport
import Testing

@testable import LonglinkSQLite

extension ToggleStoreFactory {
    /// `SQLiteToggleStore` on a new file for every `make`; `reopen` opens the same file on another connection.
    static let sqlite = ToggleStoreFactory(
        name: "sqlite",
        make: {
            // Kept until the process ends (the root is removed at exit).
            try SQLiteToggleStore(path: "\(TestDirectory.root)/toggles-\(UInt64.random(in: 0...UInt64.max)).sqlite")
        },
        reopen: { old in
            guard let old = old as? SQLiteToggleStore else { preconditionFailure("not a SQLiteToggleStore") }
            return try SQLiteToggleStore(path: old.path)
        }
    )
}

@Suite("SQLiteToggleStore", .ownThreads)
struct SQLiteToggleStoreTests {
    @Test("keeps the ToggleStore contract", arguments: ToggleStoreContract.checks)
    func contract(_ check: ToggleStoreContractCheck) throws {
        try check.run(.sqlite)
    }

    @Test("shares the file and its epoch with the order store, each on its own connection")
    func besideTheOrders() throws {
        let directory = TestDirectory()
        let path = directory.file("both.sqlite")
        let orders = try SQLiteOrderStore(path: path)
        defer { orders.shutdown() }
        let toggles = try SQLiteToggleStore(path: path)
        defer { toggles.shutdown() }
        #expect(toggles.epoch == orders.epoch)
        _ = try orders.apply(OrderFixtures.change("t1", BuiltInLines.created))
        let toggle = try toggles.setToggle(app: "rider", name: "new_home", value: .bool(true), nowMillis: 1)
        #expect(toggle.position.epoch == orders.epoch)
        _ = try orders.apply(OrderFixtures.change("t1", BuiltInLines.dispatching))
        #expect(try orders.snapshot(of: .taxi, OrderFixtures.id("t1"))?.position.offset == 2)
        #expect(try toggles.database.connection.scalarInt("SELECT COUNT(*) FROM toggles") == 1)
    }
}
