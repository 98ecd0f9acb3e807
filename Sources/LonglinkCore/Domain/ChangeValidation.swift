/// The rules every `OrderStore` applies, in one place: memory, SQLite and Redis stores call these functions and
/// keep no validation logic of their own.
///
/// A store's `apply` is: look up the idempotency key (a replay returns the first record after `checkReplay`), look up the current
/// snapshot, call `prepare(_:current:catalog:epoch:nowMillis:)`, then write the returned record and snapshot
/// atomically. History reads use `window(after:epoch:firstOffset:lastOffset:)`; imports use
/// `prepareImport(_:history:catalog:epoch:)`.
public enum ChangeValidation {
    /// The longest driver id, in UTF-8 bytes.
    public static let maxDriverIDBytes = 128
    /// The longest cancellation reason, in UTF-8 bytes.
    public static let maxCancellationReasonBytes = 512
    /// The longest idempotency key, in UTF-8 bytes.
    public static let maxIdempotencyKeyBytes = 128

    /// A validated change: the record to append and the order's snapshot after it.
    public struct Prepared: Hashable, Sendable {
        /// The record to store (position and timestamp assigned).
        public var record: OrderChangeRecord
        /// The snapshot after the record.
        public var snapshot: OrderSnapshot
    }

    /// Validates `change` against the line's state machine and the order's current snapshot (nil when the order
    /// does not exist) and builds the next record and snapshot.
    ///
    /// Checks, in order: the line is known; the target state belongs to it; the fields are valid (payload size,
    /// location range, string lengths, idempotency key length); a new order's first change targets the initial
    /// state (otherwise `unknownOrder`); an existing order's move is allowed (otherwise `illegalTransition` naming
    /// from, to and the allowed next states); the fields the target state requires are set by the change.
    ///
    /// The record's offset is the current one plus 1 (1 for a new order) in `epoch`; its timestamp is `nowMillis`,
    /// but never earlier than the order's last update, so timestamps never go backwards within an order.
    public static func prepare(
        _ change: OrderChange,
        current: OrderSnapshot?,
        catalog: StateMachineCatalog,
        epoch: UInt32,
        nowMillis: UInt64
    ) throws(StoreError) -> Prepared {
        let machine = try machine(for: change.line, in: catalog)
        return try prepare(
            change,
            current: current,
            currentStateIndex: nil,
            machine: machine,
            epoch: epoch,
            nowMillis: nowMillis
        ).prepared
    }

    /// The state machine of `line`, or `unknownLine`: what a change and a subscribe to the line's orders need first.
    public static func machine(for line: BusinessLine, in catalog: StateMachineCatalog) throws(StoreError) -> StateMachine {
        guard let machine = catalog.machine(for: line) else { throw .unknownLine(line.name) }
        return machine
    }

    /// Checks that `change`, whose idempotency key is the key of the already stored `first`, asks for the same
    /// change: the same target state and the same fields. A store calls it before answering a replay with `first`;
    /// a different change under a used key is `idempotencyConflict` (answering with `first` would report success
    /// for a state that was never stored).
    public static func checkReplay(_ change: OrderChange, of first: OrderChangeRecord) throws(StoreError) {
        guard first.toState == change.targetState, first.fields == change.fields else {
            throw .idempotencyConflict(key: change.idempotencyKey, route: change.route, storedState: first.toState)
        }
    }

    /// `prepare(_:current:catalog:epoch:nowMillis:)` for a store that already holds the line's machine and the
    /// index of the order's current state in it (nil: look it up); also returns the new state's index.
    static func prepare(
        _ change: OrderChange,
        current: OrderSnapshot?,
        currentStateIndex: Int?,
        machine: StateMachine,
        epoch: UInt32,
        nowMillis: UInt64
    ) throws(StoreError) -> (prepared: Prepared, stateIndex: Int) {
        guard let target = machine.index(of: change.targetState) else {
            throw .unknownState(line: change.line, state: change.targetState)
        }
        try validateFields(change.fields)
        guard change.idempotencyKey.utf8.count <= maxIdempotencyKeyBytes else {
            throw .invalidField("idempotency key longer than \(maxIdempotencyKeyBytes) bytes")
        }
        if let current {
            guard current.line == change.line, current.orderID == change.orderID else {
                throw .conflict("snapshot of \(current.line)/\(current.orderID) given for \(change.route)")
            }
            let currentState = current.state
            guard let from = currentStateIndex ?? machine.index(of: currentState) else {
                throw .unknownState(line: change.line, state: currentState)
            }
            guard machine.allows(fromIndex: from, toIndex: target) else {
                throw .illegalTransition(
                    line: change.line,
                    order: change.orderID,
                    from: currentState,
                    to: change.targetState,
                    allowed: machine.allowedNext(fromIndex: from)
                )
            }
            try checkRequired(machine.requiredFields(atIndex: target), change)
            let cell = ValueBox(
                OrderCell(
                    orderID: change.orderID,
                    line: change.line,
                    fromState: currentState,
                    toState: change.targetState,
                    fields: change.fields,
                    merged: current.fields.merging(change.fields),
                    position: StreamPosition(epoch: epoch, offset: current.position.offset + 1),
                    timestampMillis: max(nowMillis, current.updatedAtMillis),
                    createdAtMillis: current.createdAtMillis,
                    idempotencyKey: change.idempotencyKey,
                    kind: .order
                )
            )
            return (Prepared(record: OrderChangeRecord(cell: cell), snapshot: OrderSnapshot(cell: cell)), target)
        }
        guard target == machine.initialIndex else {
            throw .unknownOrder(change.line, change.orderID)
        }
        try checkRequired(machine.requiredFields(atIndex: target), change)
        // The first record's cell is also the new order's snapshot (merged fields = its fields).
        let record = OrderChangeRecord(
            orderID: change.orderID,
            line: change.line,
            fromState: nil,
            toState: change.targetState,
            fields: change.fields,
            position: StreamPosition(epoch: epoch, offset: 1),
            timestampMillis: nowMillis,
            idempotencyKey: change.idempotencyKey
        )
        return (Prepared(record: record, snapshot: OrderSnapshot(cell: record.cell)), target)
    }

    /// Checks field validity: payload size, location range, driver id and cancellation reason lengths.
    public static func validateFields(_ fields: OrderFields) throws(StoreError) {
        if fields.isEmpty { return }
        if fields.payload.count > OrderFields.maxPayloadBytes {
            throw .invalidField("payload of \(fields.payload.count) bytes exceeds \(OrderFields.maxPayloadBytes)")
        }
        if let location = fields.location, !location.isValid {
            throw .invalidField("location \(location.latitudeE6),\(location.longitudeE6) is out of range")
        }
        if let driver = fields.driverID, driver.isEmpty || driver.utf8.count > maxDriverIDBytes {
            throw .invalidField("driver id must be 1-\(maxDriverIDBytes) bytes")
        }
        if let reason = fields.cancellationReason, reason.isEmpty || reason.utf8.count > maxCancellationReasonBytes {
            throw .invalidField("cancellation reason must be 1-\(maxCancellationReasonBytes) bytes")
        }
    }

    private static func checkRequired(_ required: [OrderFieldName], _ change: OrderChange) throws(StoreError) {
        if required.isEmpty { return }
        for field in required where !field.isSet(in: change.fields) {
            throw .invalidField("'\(change.targetState)' of line \(change.line) requires \(field)")
        }
    }

    /// Whether `snapshot`'s order is in a terminal state of its line.
    public static func isTerminal(_ snapshot: OrderSnapshot, catalog: StateMachineCatalog) -> Bool {
        catalog.machine(for: snapshot.line)?.isTerminal(snapshot.state) ?? false
    }
}
