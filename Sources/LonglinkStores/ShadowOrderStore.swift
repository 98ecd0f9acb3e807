public import LonglinkCore

/// An `OrderStore` that runs a shadow store beside the primary, to try a new store in production safely
/// (`shadowStore = sqlite`): every answer comes from the primary, and the shadow keeps a faithful copy of it.
///
/// A change is applied by the primary only; the record it committed goes to the shadow as committed
/// (`applyCommittedBatch`: same offsets, timestamps, fields and idempotency keys, the shadow's epoch), so
/// `longlink migrate --from PRIMARY --to SHADOW --verify` finds them identical. Any difference is reported to a
/// `ShadowDivergenceReporter` with the order id: a shadow that refuses or fails to store a record, a record or
/// snapshot it answers differently, a refusal by the primary that the shadow's copy of the order would not
/// explain, reads that answer differently. Comparisons cover every field `--verify` compares (timestamps
/// included) and ignore only epochs (each store has its own); history reads are asked of the shadow with the
/// position moved into its epoch.
///
/// A failure of the shadow never fails the primary: shadow errors are only reported.
public final class ShadowOrderStore: OrderStore {
    /// The store whose answers are returned.
    public let primary: any OrderStore
    /// The store under trial.
    public let shadow: any OrderStore
    /// Where differences go.
    public let reporter: ShadowDivergenceReporter
    /// Whether reads are also asked of the shadow and compared (doubles read cost).
    public let compareReads: Bool

    /// Wraps `primary` with `shadow`.
    public init(
        primary: any OrderStore,
        shadow: any OrderStore,
        reporter: ShadowDivergenceReporter,
        compareReads: Bool = true
    ) {
        self.primary = primary
        self.shadow = shadow
        self.reporter = reporter
        self.compareReads = compareReads
    }

    public var epoch: UInt32 { primary.epoch }

    public func apply(_ change: OrderChange) throws(StoreError) -> AppliedChange {
        let result = Result { () throws(StoreError) in try primary.apply(change) }
        mirror([result], of: [change])
        return try result.get()
    }

    public func applyBatch(_ changes: [OrderChange]) -> [Result<AppliedChange, StoreError>] {
        let results = primary.applyBatch(changes)
        mirror(results, of: changes)
        return results
    }

    /// Records committed elsewhere: stored by the primary, and what it stored handed on to the shadow.
    public func applyCommittedBatch(_ records: [OrderChangeRecord]) -> [Result<AppliedChange, StoreError>] {
        let results = primary.applyCommittedBatch(records)
        handOn(results, operation: "applyCommitted")
        return results
    }

    /// Hands what the primary committed to the shadow as committed, then checks the primary's refusals against
    /// the shadow's copy of the order (after the batch, so both copies stand at the same point).
    private func mirror(_ results: [Result<AppliedChange, StoreError>], of changes: [OrderChange]) {
        handOn(results, operation: "apply")
        for (result, change) in zip(results, changes) {
            guard case .failure(let error) = result else { continue }
            checkRefusal(error, change)
        }
    }

    /// Stores the primary's successful results' records in the shadow (one batch) and compares its answers.
    private func handOn(_ results: [Result<AppliedChange, StoreError>], operation: String) {
        var committed: [OrderChangeRecord] = []
        committed.reserveCapacity(results.count)
        for case .success(let applied) in results { committed.append(applied.record) }
        guard !committed.isEmpty else { return }
        let second = shadow.applyCommittedBatch(committed)
        var next = 0
        for case .success(let applied) in results {
            guard next < second.count else {
                report(operation, .shadowFailed, applied.record.line, applied.record.orderID, "shadow returned \(second.count) results")
                return
            }
            compare(applied, second[next], operation: operation)
            next += 1
        }
    }

    /// A refusal that depends on the order's current state (an illegal transition, an unknown order) is explained
    /// by the primary's copy of the order; the shadow's copy must be the same.
    private func checkRefusal(_ error: StoreError, _ change: OrderChange) {
        switch error {
        case .illegalTransition, .unknownOrder: break
        default: return
        }
        let first = Result { () throws(StoreError) in try primary.snapshot(of: change.line, change.orderID) }
        let second = Result { () throws(StoreError) in try shadow.snapshot(of: change.line, change.orderID) }
        if case .failure(let failure) = second {
            report("apply", .shadowFailed, change.line, change.orderID, "refused by the primary (\(error.code)); \(failure)")
        } else if let what = Self.difference(first, second) {
            report("apply", .resultDiffers, change.line, change.orderID, "refused by the primary (\(error.code)), and \(what)")
        }
    }

    public func snapshot(of line: BusinessLine, _ order: OrderID) throws(StoreError) -> OrderSnapshot? {
        let first = Result { () throws(StoreError) in try primary.snapshot(of: line, order) }
        if compareReads {
            let second = Result { () throws(StoreError) in try shadow.snapshot(of: line, order) }
            switch (first, second) {
            case (.success, .failure(let error)): report("snapshot", .shadowFailed, line, order, "\(error)")
            case (.failure(let error), .success): report("snapshot", .primaryFailed, line, order, "\(error)")
            case (.failure(let a), .failure(let b)):
                if a != b { report("snapshot", .errorDiffers, line, order, "\(a) vs \(b)") }
            case (.success, .success):
                if let what = Self.difference(first, second) { report("snapshot", .readDiffers, line, order, what) }
            }
        }
        return try first.get()
    }

    /// What differs between the two stores' snapshots of one order (ignoring epochs), or nil; failures to read
    /// are not differences here.
    private static func difference(
        _ first: Result<OrderSnapshot?, StoreError>,
        _ second: Result<OrderSnapshot?, StoreError>
    ) -> String? {
        guard case .success(let a) = first, case .success(let b) = second else { return nil }
        if let a, let b { return ChangeValidation.difference(a, b).map { "snapshot: \($0)" } }
        if (a == nil) != (b == nil) { return "snapshot \(describe(a)) vs \(describe(b))" }
        return nil
    }

    public func records(of line: BusinessLine, _ order: OrderID, after position: StreamPosition, limit: Int)
        throws(StoreError) -> HistoryRead
    {
        let first = Result { () throws(StoreError) in
            try primary.records(of: line, order, after: position, limit: limit)
        }
        if compareReads {
            var moved = position
            if position != .zero && position.epoch == primary.epoch { moved.epoch = shadow.epoch }
            let second = Result { () throws(StoreError) in
                try shadow.records(of: line, order, after: moved, limit: limit)
            }
            switch (first, second) {
            case (.success(let a), .success(let b)):
                if Self.normalized(a) != Self.normalized(b) {
                    report(
                        "records",
                        .readDiffers,
                        line,
                        order,
                        "after \(position.offset): \(Self.describe(a)) vs \(Self.describe(b))"
                    )
                }
            case (.failure(let a), .failure(let b)) where a == b: break
            case (.success, .failure(let error)): report("records", .shadowFailed, line, order, "\(error)")
            case (.failure(let error), .success): report("records", .primaryFailed, line, order, "\(error)")
            case (.failure(let a), .failure(let b)): report("records", .errorDiffers, line, order, "\(a) vs \(b)")
            }
        }
        return try first.get()
    }

    /// Answered by the primary alone.
    public func retainedHistory(of line: BusinessLine, _ order: OrderID) throws(StoreError)
        -> (snapshot: OrderSnapshot, history: [OrderChangeRecord])?
    {
        try primary.retainedHistory(of: line, order)
    }

    /// Answered by the primary alone.
    public func orders(after cursor: OrderCursor?, limit: Int) throws(StoreError) -> [OrderSnapshot] {
        try primary.orders(after: cursor, limit: limit)
    }

    @discardableResult
    public func importOrder(_ snapshot: OrderSnapshot, history: [OrderChangeRecord], policy: ImportPolicy)
        throws(StoreError) -> ImportOutcome
    {
        let first = Result { () throws(StoreError) in
            try primary.importOrder(snapshot, history: history, policy: policy)
        }
        let second = Result { () throws(StoreError) in
            try shadow.importOrder(snapshot, history: history, policy: policy)
        }
        compareImport(first, second, "importOrder", snapshot.line, snapshot.orderID)
        return try first.get()
    }

    /// Compares the two stores' answers to an import.
    func compareImport(
        _ first: Result<ImportOutcome, StoreError>,
        _ second: Result<ImportOutcome, StoreError>,
        _ operation: String,
        _ line: BusinessLine?,
        _ order: OrderID?
    ) {
        switch (first, second) {
        case (.success(let a), .success(let b)):
            if a != b { report(operation, .resultDiffers, line, order, "primary \(a), shadow \(b)") }
        case (.failure(let a), .failure(let b)) where a == b: break
        case (.success, .failure(let error)): report(operation, .shadowFailed, line, order, "\(error)")
        case (.failure(let error), .success): report(operation, .primaryFailed, line, order, "\(error)")
        case (.failure(let a), .failure(let b)): report(operation, .errorDiffers, line, order, "\(a) vs \(b)")
        }
    }

    public func expire(nowMillis: UInt64) throws(StoreError) -> Int {
        let first = Result { () throws(StoreError) in try primary.expire(nowMillis: nowMillis) }
        let second = Result { () throws(StoreError) in try shadow.expire(nowMillis: nowMillis) }
        switch (first, second) {
        case (.success(let a), .success(let b)) where a != b:
            report("expire", .expiryDiffers, nil, nil, "primary removed \(a) orders, shadow \(b)")
        case (.success, .failure(let error)): report("expire", .shadowFailed, nil, nil, "\(error)")
        default: break
        }
        return try first.get()
    }

    public func shutdown() {
        primary.shutdown()
        shadow.shutdown()
    }

    // MARK: Comparison

    /// Compares what the primary committed with what the shadow answered storing it.
    private func compare(_ applied: AppliedChange, _ second: Result<AppliedChange, StoreError>, operation: String) {
        let record = applied.record
        switch second {
        case .success(let b):
            let what =
                ChangeValidation.difference(record, b.record).map { "record: \($0)" }
                ?? ChangeValidation.difference(applied.snapshot, b.snapshot).map { "snapshot: \($0)" }
                ?? (applied.deduplicated != b.deduplicated
                    ? "deduplicated \(applied.deduplicated) vs \(b.deduplicated)" : nil)
            if let what {
                report(operation, .resultDiffers, record.line, record.orderID, "at offset \(record.position.offset): \(what)")
            }
        case .failure(let error):
            report(operation, .shadowFailed, record.line, record.orderID, "at offset \(record.position.offset): \(error)")
        }
    }

    func report(
        _ operation: String,
        _ kind: ShadowDivergence.Kind,
        _ line: BusinessLine?,
        _ order: OrderID?,
        _ detail: String
    ) {
        reporter.report(ShadowDivergence(operation: operation, kind: kind, line: line, orderID: order, detail: detail))
    }

    static func normalized(_ record: OrderChangeRecord) -> OrderChangeRecord {
        var record = record
        record.position.epoch = 0
        return record
    }

    static func normalized(_ read: HistoryRead) -> HistoryRead {
        switch read {
        case .expired: .expired
        case .records(let records): .records(records.map { normalized($0) })
        }
    }

    static func describe(_ snapshot: OrderSnapshot?) -> String {
        snapshot.map { "\($0.state)@\($0.position.offset)" } ?? "none"
    }

    static func describe(_ read: HistoryRead) -> String {
        switch read {
        case .expired: "expired"
        case .records(let records): "\(records.count) records"
        }
    }
}
