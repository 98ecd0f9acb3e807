import LonglinkCore
import LonglinkOperations
import LonglinkTestSupport
import Testing

/// The admin tap's ring of recent changes.
@Suite("Recent changes ring", .ownThreads)
struct RecentChangesTests {
    /// `count` real changes from a memory store: orders r0, r1, ….
    static func changes(_ count: Int) throws -> [ContentChange] {
        let store = MemoryOrderStore()
        return try (0..<count).map { index in
            let applied = try store.apply(OrderFixtures.change("r\(index)", BuiltInLines.created))
            return ContentChange(route: applied.record.route, record: applied.record, snapshot: applied.snapshot)
        }
    }

    @Test("keeps the newest changes, oldest first, below, at and past its capacity", arguments: [0, 2, 3, 4, 7, 9])
    func newestOldestFirst(count: Int) throws {
        let ring = RecentChanges(capacity: 3)
        for change in try Self.changes(count) { ring.contentDidChange(change) }
        let expected = (max(0, count - 3)..<count).map { "r\($0)" }
        #expect(ring.changes.map(\.record.orderID.rawValue) == expected)
    }

    @Test("registered inline, it holds a commit's changes as soon as notify returns")
    func inlineInRegistry() throws {
        let registry = ObserverRegistry()
        let ring = RecentChanges(capacity: 2)
        let token = registry.observeInline(.all, ring)
        registry.notify(try Self.changes(3))
        #expect(ring.changes.map(\.record.orderID.rawValue) == ["r1", "r2"])
        token.cancel()
    }
}
