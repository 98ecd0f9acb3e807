/// A change the Store accepted and recorded: the change plus where it sits in the order's history.
/// Immutable once made; this is what observers, brokers and subscribers receive.
///
/// A value type over one shared, immutable box: copying a record (into a history, a delivery, every loop's inbox)
/// is one retain, not a copy of its dozen fields. Setting a property makes a new box (records are rarely edited:
/// imports and tests).
public struct OrderChangeRecord: Hashable, Sendable {
    /// The fields, stored once and shared by every copy.
    struct Storage: Hashable, Sendable {
        var orderID: OrderID
        var line: BusinessLine
        var fromState: OrderState?
        var toState: OrderState
        var fields: OrderFields
        var position: StreamPosition
        var timestampMillis: UInt64
        var idempotencyKey: String
        var kind: RouteKind
    }

    private(set) var box: ValueBox<Storage>

    /// The order that changed.
    public var orderID: OrderID {
        get { box.value.orderID }
        set { update { $0.orderID = newValue } }
    }
    /// Its business line.
    public var line: BusinessLine {
        get { box.value.line }
        set { update { $0.line = newValue } }
    }
    /// The state before the change; nil for the order's first record.
    public var fromState: OrderState? {
        get { box.value.fromState }
        set { update { $0.fromState = newValue } }
    }
    /// The state after the change.
    public var toState: OrderState {
        get { box.value.toState }
        set { update { $0.toState = newValue } }
    }
    /// The fields set by this change (not merged; the snapshot holds the merged view).
    public var fields: OrderFields {
        get { box.value.fields }
        set { update { $0.fields = newValue } }
    }
    /// Position in the order's history.
    public var position: StreamPosition {
        get { box.value.position }
        set { update { $0.position = newValue } }
    }
    /// When the Store accepted the change, in milliseconds since the Unix epoch.
    public var timestampMillis: UInt64 {
        get { box.value.timestampMillis }
        set { update { $0.timestampMillis = newValue } }
    }
    /// The publisher's idempotency key (empty when none). Kept by stores, not pushed to subscribers.
    public var idempotencyKey: String {
        get { box.value.idempotencyKey }
        set { update { $0.idempotencyKey = newValue } }
    }
    /// The kind of route the record is on: `.order`, or `.config` for a feature toggle (whose app is `line` and
    /// name `orderID`).
    public var kind: RouteKind {
        get { box.value.kind }
        set { update { $0.kind = newValue } }
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
        box = ValueBox(
            Storage(
                orderID: orderID,
                line: line,
                fromState: fromState,
                toState: toState,
                fields: fields,
                position: position,
                timestampMillis: timestampMillis,
                idempotencyKey: idempotencyKey,
                kind: kind
            )
        )
    }

    private mutating func update(_ change: (inout Storage) -> Void) {
        var value = box.value
        change(&value)
        box = ValueBox(value)
    }

    public static func == (lhs: OrderChangeRecord, rhs: OrderChangeRecord) -> Bool {
        lhs.box === rhs.box || lhs.box.value == rhs.box.value
    }
    public func hash(into hasher: inout Hasher) { hasher.combine(box.value) }

    /// The route this record is pushed on.
    public var route: Route { kind == .order ? .order(line, orderID) : .record(kind, line, orderID) }
}
