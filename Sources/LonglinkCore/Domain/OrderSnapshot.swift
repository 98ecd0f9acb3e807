/// An order as it is now: its current state, the merged fields and the position of its last record.
///
/// Like `OrderChangeRecord`, a value over one shared immutable box: copies are one retain.
public struct OrderSnapshot: Hashable, Sendable {
    /// The fields, stored once and shared by every copy.
    struct Storage: Hashable, Sendable {
        var orderID: OrderID
        var line: BusinessLine
        var state: OrderState
        var fields: OrderFields
        var position: StreamPosition
        var createdAtMillis: UInt64
        var updatedAtMillis: UInt64
        var kind: RouteKind
    }

    private(set) var box: ValueBox<Storage>

    /// The order.
    public var orderID: OrderID {
        get { box.value.orderID }
        set { update { $0.orderID = newValue } }
    }
    /// Its business line.
    public var line: BusinessLine {
        get { box.value.line }
        set { update { $0.line = newValue } }
    }
    /// Its current state.
    public var state: OrderState {
        get { box.value.state }
        set { update { $0.state = newValue } }
    }
    /// All fields set so far, merged.
    public var fields: OrderFields {
        get { box.value.fields }
        set { update { $0.fields = newValue } }
    }
    /// Position of the last record applied.
    public var position: StreamPosition {
        get { box.value.position }
        set { update { $0.position = newValue } }
    }
    /// When the first record was accepted (ms since the Unix epoch).
    public var createdAtMillis: UInt64 {
        get { box.value.createdAtMillis }
        set { update { $0.createdAtMillis = newValue } }
    }
    /// When the last record was accepted (ms since the Unix epoch).
    public var updatedAtMillis: UInt64 {
        get { box.value.updatedAtMillis }
        set { update { $0.updatedAtMillis = newValue } }
    }
    /// The kind of route: `.order`, or `.config` for a feature toggle.
    public var kind: RouteKind {
        get { box.value.kind }
        set { update { $0.kind = newValue } }
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
        box = ValueBox(
            Storage(
                orderID: orderID,
                line: line,
                state: state,
                fields: fields,
                position: position,
                createdAtMillis: createdAtMillis,
                updatedAtMillis: updatedAtMillis,
                kind: kind
            )
        )
    }

    private mutating func update(_ change: (inout Storage) -> Void) {
        var value = box.value
        change(&value)
        box = ValueBox(value)
    }

    public static func == (lhs: OrderSnapshot, rhs: OrderSnapshot) -> Bool {
        lhs.box === rhs.box || lhs.box.value == rhs.box.value
    }
    public func hash(into hasher: inout Hasher) { hasher.combine(box.value) }

    /// The route of this order (or toggle).
    public var route: Route { kind == .order ? .order(line, orderID) : .record(kind, line, orderID) }

    /// The snapshot after `record` is applied on top of it.
    public func applying(_ record: OrderChangeRecord) -> OrderSnapshot {
        let change = record.box.value
        return OrderSnapshot(
            box: ValueBox(
                Storage(
                    orderID: box.value.orderID,
                    line: box.value.line,
                    state: change.toState,
                    fields: box.value.fields.merging(change.fields),
                    position: change.position,
                    createdAtMillis: box.value.createdAtMillis,
                    updatedAtMillis: change.timestampMillis,
                    kind: box.value.kind
                )
            )
        )
    }

    /// The snapshot of a new order made by its first record.
    public init(first record: OrderChangeRecord) {
        let first = record.box.value
        box = ValueBox(
            Storage(
                orderID: first.orderID,
                line: first.line,
                state: first.toState,
                fields: first.fields,
                position: first.position,
                createdAtMillis: first.timestampMillis,
                updatedAtMillis: first.timestampMillis,
                kind: first.kind
            )
        )
    }

    private init(box: ValueBox<Storage>) { self.box = box }
}
