/// A request to move an order to a new state: what a backend publishes. It is not yet accepted;
/// the Store validates it against the line's state machine and either records it or refuses it.
///
/// A plain value: identifiers are short strings stored inline and the fields are one shared box, so a change
/// costs no allocation of its own on its way from the connection's loop through the loop's publish batch to the
/// store (which borrows it where it lies).
public struct OrderChange: Hashable, Sendable {
    /// The order to change (created by its first change, which must target the line's initial state).
    public var orderID: OrderID
    /// The order's business line.
    public var line: BusinessLine
    /// The state the order should move to.
    public var targetState: OrderState
    /// Fields to set with the change.
    public var fields: OrderFields
    /// A key chosen by the publisher; applying the same key twice returns the first result and stores nothing new.
    /// Empty means "not idempotent".
    public var idempotencyKey: String

    public init(
        orderID: OrderID,
        line: BusinessLine,
        targetState: OrderState,
        fields: OrderFields = .none,
        idempotencyKey: String = ""
    ) {
        self.orderID = orderID
        self.line = line
        self.targetState = targetState
        self.fields = fields
        self.idempotencyKey = idempotencyKey
    }

    /// The route subscribers of this order listen on.
    public var route: Route { .order(line, orderID) }
}
