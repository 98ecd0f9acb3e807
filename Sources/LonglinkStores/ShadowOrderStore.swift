public import LonglinkCore

/// An `OrderStore` that runs a shadow store beside the primary, to try a new store in production safely
/// (`shadowStore = sqlite`): every change goes to both, every answer comes from the primary, and any difference
/// (result, error, snapshot, position, history) is reported to a `ShadowDivergenceReporter` with the order id.
///
/// A failure of the shadow never fails the primary: shadow errors are only reported. Comparisons ignore epochs
/// (each store has its own) and record timestamps (each store reads its own clock); history reads are asked of
/// the shadow with the position moved into its epoch.
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

    public func epoch(of line: BusinessLine, _ order: OrderID) -> UInt32 { primary.epoch(of: line, order) }

    public func apply(_ change: OrderChange) throws(StoreError) -> AppliedChange {
        let first = Result { () throws(StoreError) in try primary.apply(change) }
        let second = Result { () throws(StoreError) in try shadow.apply(change) }
        compare(first, second, change)
        return try first.get()
    }

    public func applyBatch(_ changes: [OrderChange]) -> [Result<AppliedChange, StoreError>] {
        let first = primary.applyBatch(changes)
        let second = shadow.applyBatch(changes)
        for (i, change) in changes.enumerated() {
            guard i < first.count else { break }
            guard i < second.count else {
                report(
                    "applyBatch",
                    .shadowFailed,
                    change.line,
                    change.orderID,
                    "shadow returned \(second.count) results"
                )
                break
            }
            compare(first[i], second[i], change)
        }
        return first
    }

    public func snapshot(of line: BusinessLine, _ order: OrderID) throws(StoreError) -> OrderSnapshot? {
        let first = Result { () throws(StoreError) in try primary.snapshot(of: line, order) }
        if compareReads {
            let second = Result { () throws(StoreError) in try shadow.snapshot(of: line, order) }
            switch (first, second) {
            case (.success(let a), .success(let b)):
                if let a, let b {
                    if let what = ChangeValidation.difference(a, b, ignoringTimestamps: true) {
                        report("snapshot", .readDiffers, line, order, what)
                    }
                } else if (a == nil) != (b == nil) {
                    report("snapshot", .readDiffers, line, order, "\(Self.describe(a)) vs \(Self.describe(b))")
                }
            case (.failure(let a), .failure(let b)) where a == b: break
            case (.success, .failure(let error)): report("snapshot", .shadowFailed, line, order, "\(error)")
            case (.failure(let error), .success): report("snapshot", .primaryFailed, line, order, "\(error)")
            case (.failure(let a), .failure(let b)): report("snapshot", .errorDiffers, line, order, "\(a) vs \(b)")
            }
        }
        return try first.get()
    }

    public func records(of line: BusinessLine, _ order: OrderID, after position: StreamPosition, limit: Int)
        throws(StoreError) -> HistoryRead
    {
        let first = Result { () throws(StoreError) in
            try primary.records(of: line, order, after: position, limit: limit)
        }
        if compareReads {
            var moved = position
            if position != .zero && position.epoch == primary.epoch(of: line, order) { moved.epoch = shadow.epoch(of: line, order) }
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

    public func importOrder(_ snapshot: OrderSnapshot, history: [OrderChangeRecord], replace: Bool) throws(StoreError) {
        let first = Result { () throws(StoreError) in
            try primary.importOrder(snapshot, history: history, replace: replace)
        }
        let second = Result { () throws(StoreError) in
            try shadow.importOrder(snapshot, history: history, replace: replace)
        }
        switch (first, second) {
        case (.success, .success): break
        case (.failure(let a), .failure(let b)) where a == b: break
        case (.success, .failure(let error)):
            report("importOrder", .shadowFailed, snapshot.line, snapshot.orderID, "\(error)")
        case (.failure(let error), .success):
            report("importOrder", .primaryFailed, snapshot.line, snapshot.orderID, "\(error)")
        case (.failure(let a), .failure(let b)):
            report("importOrder", .errorDiffers, snapshot.line, snapshot.orderID, "\(a) vs \(b)")
        }
        try first.get()
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

    private func compare(
        _ first: Result<AppliedChange, StoreError>,
        _ second: Result<AppliedChange, StoreError>,
        _ change: OrderChange
    ) {
        switch (first, second) {
        case (.success(let a), .success(let b)):
            let what =
                ChangeValidation.difference(a.record, b.record, ignoringTimestamps: true).map { "record: \($0)" }
                ?? ChangeValidation.difference(a.snapshot, b.snapshot, ignoringTimestamps: true).map {
                    "snapshot: \($0)"
                }
                ?? (a.deduplicated != b.deduplicated ? "deduplicated \(a.deduplicated) vs \(b.deduplicated)" : nil)
            if let what {
                report(
                    "apply",
                    .resultDiffers,
                    change.line,
                    change.orderID,
                    "at offset \(a.record.position.offset): \(what)"
                )
            }
        case (.failure(let a), .failure(let b)):
            if a != b { report("apply", .errorDiffers, change.line, change.orderID, "\(a) vs \(b)") }
        case (.success, .failure(let error)):
            report("apply", .shadowFailed, change.line, change.orderID, "\(error)")
        case (.failure(let error), .success):
            report("apply", .primaryFailed, change.line, change.orderID, "\(error)")
        }
    }

    private func report(
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
        record.timestampMillis = 0
        return record
    }

    static func normalized(_ snapshot: OrderSnapshot) -> OrderSnapshot {
        var snapshot = snapshot
        snapshot.position.epoch = 0
        snapshot.createdAtMillis = 0
        snapshot.updatedAtMillis = 0
        return snapshot
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
