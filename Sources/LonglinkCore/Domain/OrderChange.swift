/// A request to move an order to a new state: what a backend publishes. It is not yet accepted;
/// the Store validates it against the line's state machine and either records it or refuses it.
///
/// A value over one shared immutable box, like `OrderChangeRecord`: a change crosses threads and queues (the
/// connection's loop, the Store writer's mailbox, the batch) with one retain per copy.
public struct OrderChange: Hashable, Sendable {
    /// The values, shared by every copy.
    struct Storage: Hashable, Sendable {
        var orderID: OrderID
        var line: BusinessLine
        var targetState: OrderState
        var fields: OrderFields
        var idempotencyKey: String
    }

    private(set) var box: ValueBox<Storage>

    /// The order to change (created by its first change, which must target the line's initial state).
    public var orderID: OrderID {
        get { box.value.orderID }
        set { ValueBox.update(&box) { $0.orderID = newValue } }
    }
    /// The order's business line.
    public var line: BusinessLine {
        get { box.value.line }
        set { ValueBox.update(&box) { $0.line = newValue } }
    }
    /// The state the order should move to.
    public var targetState: OrderState {
        get { box.value.targetState }
        set { ValueBox.update(&box) { $0.targetState = newValue } }
    }
    /// Fields to set with the change.
    public var fields: OrderFields {
        get { box.value.fields }
        set { ValueBox.update(&box) { $0.fields = newValue } }
    }
    /// A key chosen by the publisher; applying the same key twice returns the first result and stores nothing new.
    /// Empty means "not idempotent".
    public var idempotencyKey: String {
        get { box.value.idempotencyKey }
        set { ValueBox.update(&box) { $0.idempotencyKey = newValue } }
    }

    public init(
        orderID: OrderID,
        line: BusinessLine,
        targetState: OrderState,
        fields: OrderFields = .none,
        idempotencyKey: String = ""
    ) {
        box = ValueBox(
            Storage(
                orderID: orderID,
                line: line,
                targetState: targetState,
                fields: fields,
                idempotencyKey: idempotencyKey
            )
        )
    }

    public static func == (lhs: OrderChange, rhs: OrderChange) -> Bool {
        lhs.box === rhs.box || lhs.box.value == rhs.box.value
    }
    public func hash(into hasher: inout Hasher) { hasher.combine(box.value) }

    /// The route subscribers of this order listen on.
    public var route: Route { .order(line, orderID) }
}
