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
        if let what = difference(a.snapshot, b.snapshot) { return "snapshot differs: \(what)" }
        if a.history.count != b.history.count {
            return "history length differs: \(a.history.count) vs \(b.history.count)"
        }
        for (ra, rb) in zip(a.history, b.history) {
            if let what = difference(ra, rb) { return "record at offset \(ra.position.offset) differs: \(what)" }
        }
        return nil
    }

    /// What differs between two snapshots (ignoring epochs, and timestamps when asked), or nil.
    public static func difference(_ a: OrderSnapshot, _ b: OrderSnapshot, ignoringTimestamps: Bool = false) -> String? {
        var parts: [String] = []
        if a.orderID != b.orderID || a.line != b.line { parts.append("order \(a.route) vs \(b.route)") }
        if a.state != b.state { parts.append("state \(a.state) vs \(b.state)") }
        if a.position.offset != b.position.offset {
            parts.append("offset \(a.position.offset) vs \(b.position.offset)")
        }
        if a.fields != b.fields { parts.append(fieldDifference(a.fields, b.fields)) }
        if !ignoringTimestamps && (a.createdAtMillis != b.createdAtMillis || a.updatedAtMillis != b.updatedAtMillis) {
            parts.append(
                "timestamps \(a.createdAtMillis)/\(a.updatedAtMillis) vs \(b.createdAtMillis)/\(b.updatedAtMillis)"
            )
        }
        return parts.isEmpty ? nil : parts.joined(separator: "; ")
    }

    /// What differs between two records (ignoring epochs, and timestamps when asked), or nil.
    public static func difference(
        _ a: OrderChangeRecord,
        _ b: OrderChangeRecord,
        ignoringTimestamps: Bool = false
    ) -> String? {
        var parts: [String] = []
        if a.orderID != b.orderID || a.line != b.line { parts.append("order \(a.route) vs \(b.route)") }
        if a.position.offset != b.position.offset {
            parts.append("offset \(a.position.offset) vs \(b.position.offset)")
        }
        if a.fromState != b.fromState || a.toState != b.toState {
            let from = { (s: OrderState?) in s.map(\.name) ?? "-" }
            parts.append("transition \(from(a.fromState))→\(a.toState) vs \(from(b.fromState))→\(b.toState)")
        }
        if a.fields != b.fields { parts.append(fieldDifference(a.fields, b.fields)) }
        if a.idempotencyKey != b.idempotencyKey { parts.append("idempotency key differs") }
        if !ignoringTimestamps && a.timestampMillis != b.timestampMillis {
            parts.append("timestamp \(a.timestampMillis) vs \(b.timestampMillis)")
        }
        return parts.isEmpty ? nil : parts.joined(separator: "; ")
    }

    private static func fieldDifference(_ a: OrderFields, _ b: OrderFields) -> String {
        var names: [String] = []
        if a.driverID != b.driverID { names.append("driver_id") }
        if a.etaSeconds != b.etaSeconds { names.append("eta_seconds") }
        if a.location != b.location { names.append("location") }
        if a.cancellationReason != b.cancellationReason { names.append("cancellation_reason") }
        if a.payload != b.payload { names.append("payload") }
        return "fields differ: " + names.joined(separator: ", ")
    }
}
