import LonglinkCore

/// The writer's cache of recently written orders: a change to an order in it skips the `SELECT` of the snapshot.
///
/// Kept exact by three rules: an entry is updated only after its change's writes succeeded; every entry touched
/// by a batch is dropped when the batch's transaction does not commit; and everything is dropped when another
/// connection changed the file (`PRAGMA data_version` moved) or `expire`/`importOrder` rewrote rows. It holds
/// at most `capacity` orders and simply starts over when full (cheap, and hot orders come back at once).
struct SQLiteOrderCache {
    /// An order's identity.
    struct Key: Hashable {
        var line: BusinessLine
        var id: OrderID
    }

    /// The most orders kept.
    static let capacity = 50_000

    private var entries: [Key: StoredOrder] = [:]
    /// Orders written by the open batch, dropped if it does not commit.
    private var touched: [Key] = []
    /// `PRAGMA data_version` when the cache was last known exact.
    var dataVersion: Int64 = -1

    /// The cached order, if any.
    func order(_ key: Key) -> StoredOrder? { entries[key] }

    /// Records an order written by the open batch.
    mutating func store(_ order: StoredOrder, for key: Key) {
        if entries.count >= Self.capacity && entries[key] == nil { entries.removeAll(keepingCapacity: true) }
        entries[key] = order
        touched.append(key)
    }

    /// Forgets one order.
    mutating func remove(_ key: Key) { entries[key] = nil }

    /// The open batch committed: its entries are now exact.
    mutating func commit() { touched.removeAll(keepingCapacity: true) }

    /// The open batch was rolled back: forget what it wrote.
    mutating func rollback() {
        for key in touched { entries[key] = nil }
        touched.removeAll(keepingCapacity: true)
    }

    /// Forgets everything.
    mutating func clear() {
        entries.removeAll()
        touched.removeAll()
    }
}
