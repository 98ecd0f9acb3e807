/// Storing records another store already committed (`OrderStore.applyCommittedBatch`: a shadow store mirroring its
/// primary, a migration catching up), shared by every store.
extension ChangeValidation {
    /// What a store does with a record another store committed.
    public enum CommittedStep: Hashable, Sendable {
        /// The order's next record: store `prepared` (the record re-stamped into this store's epoch, and the
        /// snapshot after it), exactly as `apply` stores a prepared change.
        case append(Prepared)
        /// The record is at or before the order's current offset: answer with `heldRecord(_:stored:current:)`,
        /// given the stored record at `offset`.
        case compare(offset: UInt64)
    }

    /// Checks a record another store committed against this store's copy of the order (`current`, nil when it has
    /// none) and says what to do with it.
    ///
    /// The record is kept as committed: offset, timestamp, fields, transition and idempotency key; only its epoch
    /// becomes `epoch`. It must be the order's next record (offset 1 creating the order in its line's initial
    /// state, or the current offset plus 1 moving from the current state along an allowed transition); a record
    /// at or before the current offset is compared with the stored one. A gap, a record that moves from another
    /// state or a move the line does not allow is refused (`conflict`, `illegalTransition`): this store's copy of
    /// the order is not the one the record continues.
    public static func prepareCommitted(
        _ record: OrderChangeRecord,
        current: OrderSnapshot?,
        catalog: StateMachineCatalog,
        epoch: UInt32
    ) throws(StoreError) -> CommittedStep {
        guard let machine = catalog.machine(for: record.line) else { throw .unknownLine(record.line.name) }
        return try prepareCommitted(record, current: current, machine: machine, epoch: epoch)
    }

    /// `prepareCommitted(_:current:catalog:epoch:)` with the line's machine already found.
    static func prepareCommitted(
        _ record: OrderChangeRecord,
        current: OrderSnapshot?,
        machine: StateMachine,
        epoch: UInt32
    ) throws(StoreError) -> CommittedStep {
        let name = "\(record.line)/\(record.orderID)"
        let offset = record.position.offset
        guard record.kind == .order else { throw .invalidField("\(name): a \(record.kind) record is not an order's") }
        guard let target = machine.index(of: record.toState) else {
            throw .unknownState(line: record.line, state: record.toState)
        }
        try validateFields(record.fields)
        guard offset >= 1 else { throw .invalidField("\(name): a committed record at offset 0") }
        var restamped = record
        restamped.position.epoch = epoch
        guard let current else {
            guard offset == 1 else {
                throw .conflict("\(name): this store does not hold the order, and the record is at offset \(offset)")
            }
            guard record.fromState == nil, target == machine.initialIndex else {
                throw .conflict(
                    "\(name): the order's first record must create it in '\(machine.initialState)', "
                        + "not move \(describe(record.fromState)) → '\(record.toState)'"
                )
            }
            return .append(Prepared(record: restamped, snapshot: OrderSnapshot(first: restamped)))
        }
        let held = current.position.offset
        if offset <= held { return .compare(offset: offset) }
        guard offset == held + 1 else {
            throw .conflict("\(name): this store holds offsets up to \(held); a record at offset \(offset) leaves a gap")
        }
        guard record.fromState == current.state else {
            throw .conflict(
                "\(name): the record at offset \(offset) moves from \(describe(record.fromState)), but this store "
                    + "holds the order in '\(current.state)'"
            )
        }
        guard let from = machine.index(of: current.state) else {
            throw .unknownState(line: record.line, state: current.state)
        }
        guard machine.allows(fromIndex: from, toIndex: target) else {
            throw .illegalTransition(
                line: record.line,
                order: record.orderID,
                from: current.state,
                to: record.toState,
                allowed: machine.allowedNext(fromIndex: from)
            )
        }
        return .append(Prepared(record: restamped, snapshot: current.applying(restamped)))
    }

    /// The answer to a committed record at or before the order's current offset (`CommittedStep.compare`): the
    /// stored record (`stored`, nil when it is no longer retained) when it is the same one, ignoring epochs, as a
    /// replay (`deduplicated`, with the current snapshot); otherwise a conflict naming the difference.
    public static func heldRecord(
        _ record: OrderChangeRecord,
        stored: OrderChangeRecord?,
        current: OrderSnapshot
    ) throws(StoreError) -> AppliedChange {
        let name = "\(record.line)/\(record.orderID)"
        let offset = record.position.offset
        guard let stored, stored.position.offset == offset else {
            throw .conflict("\(name): offset \(offset) is older than the history this store retains")
        }
        if let what = difference(stored, record) {
            throw .conflict("\(name): this store holds a different record at offset \(offset): \(what)")
        }
        return AppliedChange(record: stored, snapshot: current, deduplicated: true)
    }

    private static func describe(_ state: OrderState?) -> String { state.map { "'\($0)'" } ?? "no state" }
}
