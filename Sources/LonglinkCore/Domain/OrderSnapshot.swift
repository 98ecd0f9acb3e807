/// An order as it is now: its current state, the merged fields and the position of its last record.
///
/// Like `OrderChangeRecord`, a value over one shared immutable `OrderCell` (the cell of the order's last record
/// when a store made it): copies are one retain.
public struct OrderSnapshot: Hashable, Sendable {
    /// The cell, shared by every copy.
    private(set) var cell: ValueBox<OrderCell>

    /// The order.
    public var orderID: OrderID {
        get { cell.value.orderID }
        set { ValueBox.update(&cell) { $0.orderID = newValue } }
    }
    /// Its business line.
    public var line: BusinessLine {
        get { cell.value.line }
        set { ValueBox.update(&cell) { $0.line = newValue } }
    }
    /// Its current state.
    public var state: OrderState {
        get { cell.value.toState }
        set { ValueBox.update(&cell) { $0.toState = newValue } }
    }
    /// All fields set so far, merged.
    public var fields: OrderFields {
        get { cell.value.merged }
        set { ValueBox.update(&cell) { $0.merged = newValue } }
    }
    /// Position of the last record applied.
    public var position: StreamPosition {
        get { cell.value.position }
        set { ValueBox.update(&cell) { $0.position = newValue } }
    }
    /// When the first record was accepted (ms since the Unix epoch).
    public var createdAtMillis: UInt64 {
        get { cell.value.createdAtMillis }
        set { ValueBox.update(&cell) { $0.createdAtMillis = newValue } }
    }
    /// When the last record was accepted (ms since the Unix epoch).
    public var updatedAtMillis: UInt64 {
        get { cell.value.timestampMillis }
        set { ValueBox.update(&cell) { $0.timestampMillis = newValue } }
    }
    /// The kind of route: `.order`, or `.config` for a feature toggle.
    public var kind: RouteKind {
        get { cell.value.kind }
        set { ValueBox.update(&cell) { $0.kind = newValue } }
    }

    public init(
        orderID: OrderID,
        line: BusinessLine,
        state: OrderState,
        fields: OrderFields,
        position: StreamPosition,
        createdAtMillis: UInt64,
        updatedAtMillis: UInt64,
        kind: RouteKind = .order
    ) {
        cell = ValueBox(
            OrderCell(
                orderID: orderID,
                line: line,
                fromState: nil,
                toState: state,
                fields: fields,
                merged: fields,
                position: position,
                timestampMillis: updatedAtMillis,
                createdAtMillis: createdAtMillis,
                idempotencyKey: "",
                kind: kind
            )
        )
    }

    /// A snapshot viewing `cell`.
    init(cell: ValueBox<OrderCell>) { self.cell = cell }

    public static func == (lhs: OrderSnapshot, rhs: OrderSnapshot) -> Bool {
        if lhs.cell === rhs.cell { return true }
        let l = lhs.cell.value
        let r = rhs.cell.value
        return l.orderID == r.orderID && l.line == r.line && l.toState == r.toState && l.merged == r.merged && l.position == r.position && l.createdAtMillis == r.createdAtMillis && l.timestampMillis == r.timestampMillis && l.kind == r.kind
    }

    public func hash(into hasher: inout Hasher) {
        let value = cell.value
        hasher.combine(value.orderID)
        hasher.combine(value.line)
        hasher.combine(value.toState)
        hasher.combine(value.merged)
        hasher.combine(value.position)
        hasher.combine(value.createdAtMillis)
        hasher.combine(value.timestampMillis)
        hasher.combine(value.kind)
    }

    /// The route of this order (or toggle).
    public var route: Route { kind == .order ? .order(line, orderID) : .record(kind, line, orderID) }

    /// The snapshot after `record` is applied on top of it.
    public func applying(_ record: OrderChangeRecord) -> OrderSnapshot {
        let change = record.cell.value
        return OrderSnapshot(
            cell: ValueBox(
                OrderCell(
                    orderID: cell.value.orderID,
                    line: cell.value.line,
                    fromState: change.fromState,
                    toState: change.toState,
                    fields: change.fields,
                    merged: cell.value.merged.merging(change.fields),
                    position: change.position,
                    timestampMillis: change.timestampMillis,
                    createdAtMillis: cell.value.createdAtMillis,
                    idempotencyKey: change.idempotencyKey,
                    kind: cell.value.kind
                )
            )
        )
    }

    /// The snapshot of a new order made by its first record.
    public init(first record: OrderChangeRecord) {
        let first = record.cell.value
        self.init(
            orderID: first.orderID,
            line: first.line,
            state: first.toState,
            fields: first.fields,
            position: first.position,
            createdAtMillis: first.timestampMillis,
            updatedAtMillis: first.timestampMillis,
            kind: first.kind
        )
    }
}
