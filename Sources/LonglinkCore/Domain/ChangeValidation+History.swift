/// History reads, imports and comparisons shared by every store.
extension ChangeValidation {
    /// What a history read after a position should return.
    public enum Window: Hashable, Sendable {
        /// The client cannot recover: other epoch, trimmed history, or a position the store never issued.
        case expired
        /// Nothing after the position: the client is up to date (or asked for no records).
        case upToDate
        /// Records from this offset (inclusive), at most `limit`.
        case from(offset: UInt64, limit: Int)
    }

    /// Decides a read of an order's history after `position`.
    ///
    /// `firstOffset`/`lastOffset` are the retained history's bounds, nil when the order does not exist.
    /// `StreamPosition.zero` means "from the beginning" in any epoch; any other position must carry the store's
    /// epoch. A position ahead of the last record, or before the first retained one, is `.expired`. A position
    /// with offset 0 on an order that does not exist is `.upToDate` (nothing to miss).
    public static func window(
        after position: StreamPosition,
        epoch: UInt32,
        firstOffset: UInt64?,
        lastOffset: UInt64?,
        limit: Int
    ) -> Window {
        if position != .zero && position.epoch != epoch { return .expired }
        guard let firstOffset, let lastOffset else { return position.offset == 0 ? .upToDate : .expired }
        if position.offset > lastOffset { return .expired }
        if position.offset + 1 < firstOffset { return .expired }
        if position.offset == lastOffset || limit <= 0 { return .upToDate }
        return .from(offset: position.offset + 1, limit: limit)
    }

    /// Checks an imported order (snapshot plus retained history) and returns it re-stamped into `epoch`.
    ///
    /// Offsets and timestamps are kept; every position takes the importing store's epoch, so a store never
    /// holds positions of two epochs (clients holding the source's epoch get `expired` and reload the snapshot).
    /// The history must be non-empty, belong to the snapshot's order, have strictly increasing contiguous
    /// offsets, and end at the snapshot's position; the line must be known.
    public static func prepareImport(
        _ snapshot: OrderSnapshot,
        history: [OrderChangeRecord],
        catalog: StateMachineCatalog,
        epoch: UInt32
    ) throws(StoreError) -> (snapshot: OrderSnapshot, history: [OrderChangeRecord]) {
        let name = "import of \(snapshot.line)/\(snapshot.orderID)"
        guard let machine = catalog.machine(for: snapshot.line) else { throw .unknownLine(snapshot.line.name) }
        guard machine.contains(snapshot.state) else { throw .unknownState(line: snapshot.line, state: snapshot.state) }
        guard let last = history.last else { throw .invalidField("\(name): empty history") }
        var restamped = history
        for i in restamped.indices {
            let record = restamped[i]
            guard record.orderID == snapshot.orderID, record.line == snapshot.line else {
                throw .invalidField("\(name): record of \(record.line)/\(record.orderID) in its history")
            }
            guard machine.contains(record.toState) else {
                throw .unknownState(line: record.line, state: record.toState)
            }
            if i > 0, record.position.offset != restamped[i - 1].position.offset + 1 {
                throw .invalidField("\(name): offsets not contiguous at \(record.position.offset)")
            }
            restamped[i].position.epoch = epoch
        }
        guard restamped[0].position.offset >= 1 else { throw .invalidField("\(name): offset 0 in history") }
        guard last.position.offset == snapshot.position.offset, last.toState == snapshot.state else {
            throw .invalidField("\(name): history ends at \(last.position), snapshot is at \(snapshot.position)")
        }
        var snapshot = snapshot
        snapshot.position.epoch = epoch
        return (snapshot, restamped)
    }

    /// Whether two stores hold the same order: equal snapshots and histories, ignoring the epochs of positions.
    public static func isSameOrder(
        _ a: (snapshot: OrderSnapshot, history: [OrderChangeRecord]),
        _ b: (snapshot: OrderSnapshot, history: [OrderChangeRecord])
    ) -> Bool {
        firstDifference(a, b) == nil
    }

    /// The first difference between two copies of an order (ignoring epochs), described for a report, or nil.
    public static func firstDifference(
        _ a: (snapshot: OrderSnapshot, history: [OrderChangeRecord]),
        _ b: (snapshot: OrderSnapshot, history: [OrderChangeRecord])
    ) -> String? {
        var sa = a.snapshot
        var sb = b.snapshot
        sa.position.epoch = 0
        sb.position.epoch = 0
        if sa != sb {
            return "snapshot differs: \(sa.state)@\(sa.position.offset) vs \(sb.state)@\(sb.position.offset)"
        }
        if a.history.count != b.history.count {
            return "history length differs: \(a.history.count) vs \(b.history.count)"
        }
        for (ra, rb) in zip(a.history, b.history) {
            var ra = ra
            var rb = rb
            ra.position.epoch = 0
            rb.position.epoch = 0
            if ra != rb { return "record at offset \(ra.position.offset) differs" }
        }
        return nil
    }
}
