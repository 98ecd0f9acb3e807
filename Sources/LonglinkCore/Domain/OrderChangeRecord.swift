/// A change the Store accepted and recorded: the change plus where it sits in the order's history.
/// Immutable once made; this is what observers, brokers and subscribers receive.
///
/// A value over one shared immutable `OrderCell`: copying a record (into a history, a delivery, every loop's
/// inbox) is one retain, and a store makes the record and the snapshot after it as one cell. Setting a property
/// makes a new cell (records are rarely edited: imports and tests).
public struct OrderChangeRecord: Hashable, Sendable {
    /// The cell, shared by every copy (and by the snapshot made with this record).
    @usableFromInline private(set) var cell: ValueBox<OrderCell>

    /// The order that changed.
    public var orderID: OrderID {
        @inlinable get { cell.value.orderID }
        set { ValueBox.update(&cell) { $0.orderID = newValue } }
    }
    /// Its business line.
    public var line: BusinessLine {
        @inlinable get { cell.value.line }
        set { ValueBox.update(&cell) { $0.line = newValue } }
    }
    /// The state before the change; nil for the order's first record.
    public var fromState: OrderState? {
        @inlinable get { cell.value.fromState }
        set { ValueBox.update(&cell) { $0.fromState = newValue } }
    }
    /// The state after the change.
    public var toState: OrderState {
        @inlinable get { cell.value.toState }
        set { ValueBox.update(&cell) { $0.toState = newValue } }
    }
    /// The fields set by this change (not merged; the snapshot holds the merged view).
    public var fields: OrderFields {
        @inlinable get { cell.value.fields }
        set { ValueBox.update(&cell) { $0.fields = newValue } }
    }
    /// Position in the order's history.
    public var position: StreamPosition {
        @inlinable get { cell.value.position }
        set { ValueBox.update(&cell) { $0.position = newValue } }
    }
    /// When the Store accepted the change, in milliseconds since the Unix epoch.
    public var timestampMillis: UInt64 {
        @inlinable get { cell.value.timestampMillis }
        set { ValueBox.update(&cell) { $0.timestampMillis = newValue } }
    }
    /// The publisher's idempotency key (empty when none). Kept by stores, not pushed to subscribers.
    public var idempotencyKey: String {
        @inlinable get { cell.value.idempotencyKey }
        set { ValueBox.update(&cell) { $0.idempotencyKey = newValue } }
    }
    /// The kind of route the record is on: `.order`, or `.config` for a feature toggle (whose app is `line` and
    /// name `orderID`).
    public var kind: RouteKind {
        @inlinable get { cell.value.kind }
        set { ValueBox.update(&cell) { $0.kind = newValue } }
    }

    public init(
        orderID: OrderID,
        line: BusinessLine,
        fromState: OrderState?,
        toState: OrderState,
        fields: OrderFields,
        position: StreamPosition,
        timestampMillis: UInt64,
        idempotencyKey: String = "",
        kind: RouteKind = .order
    ) {
        cell = ValueBox(
            OrderCell(
                orderID: orderID,
                line: line,
                fromState: fromState,
                toState: toState,
                fields: fields,
                merged: fields,
                position: position,
                timestampMillis: timestampMillis,
                createdAtMillis: timestampMillis,
                idempotencyKey: idempotencyKey,
                kind: kind
            )
        )
    }

    /// A record viewing `cell`.
    init(cell: ValueBox<OrderCell>) { self.cell = cell }

    public static func == (lhs: OrderChangeRecord, rhs: OrderChangeRecord) -> Bool {
        if lhs.cell === rhs.cell { return true }
        let l = lhs.cell.value
        let r = rhs.cell.value
        return l.orderID == r.orderID && l.line == r.line && l.fromState == r.fromState && l.toState == r.toState && l.fields == r.fields && l.position == r.position && l.timestampMillis == r.timestampMillis && l.idempotencyKey == r.idempotencyKey && l.kind == r.kind
    }

    public func hash(into hasher: inout Hasher) {
        let value = cell.value
        hasher.combine(value.orderID)
        hasher.combine(value.line)
        hasher.combine(value.fromState)
        hasher.combine(value.toState)
        hasher.combine(value.fields)
        hasher.combine(value.position)
        hasher.combine(value.timestampMillis)
        hasher.combine(value.idempotencyKey)
        hasher.combine(value.kind)
    }

    /// The route this record is pushed on.
    public var route: Route { kind == .order ? .order(line, orderID) : .record(kind, line, orderID) }
}

/// One accepted change and the order right after it: the storage `OrderChangeRecord` and `OrderSnapshot` share,
/// so a store makes both with one allocation. A record reads the change's fields (`fields`, `fromState`,
/// `toState`, `timestampMillis`); a snapshot reads the merged view (`merged`, `toState` as its state,
/// `timestampMillis` as its update time, `createdAtMillis`).
@usableFromInline
struct OrderCell: Sendable {
    @usableFromInline var orderID: OrderID
    @usableFromInline var line: BusinessLine
    @usableFromInline var fromState: OrderState?
    @usableFromInline var toState: OrderState
    @usableFromInline var fields: OrderFields
    @usableFromInline var merged: OrderFields
    @usableFromInline var position: StreamPosition
    @usableFromInline var timestampMillis: UInt64
    @usableFromInline var createdAtMillis: UInt64
    @usableFromInline var idempotencyKey: String
    @usableFromInline var kind: RouteKind
}
