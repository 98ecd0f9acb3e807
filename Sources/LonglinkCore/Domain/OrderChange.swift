/// A request to move an order to a new state: what a backend publishes. It is not yet accepted;
/// the Store validates it against the line's state machine and either records it or refuses it.
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

/// A change the Store accepted and recorded: the change plus where it sits in the order's history.
/// Immutable once made; this is what observers, brokers and subscribers receive.
public struct OrderChangeRecord: Hashable, Sendable {
    /// The order that changed.
    public var orderID: OrderID
    /// Its business line.
    public var line: BusinessLine
    /// The state before the change; nil for the order's first record.
    public var fromState: OrderState?
    /// The state after the change.
    public var toState: OrderState
    /// The fields set by this change (not merged; the snapshot holds the merged view).
    public var fields: OrderFields
    /// Position in the order's history.
    public var position: StreamPosition
    /// When the Store accepted the change, in milliseconds since the Unix epoch.
    public var timestampMillis: UInt64
    /// The publisher's idempotency key (empty when none). Kept by stores, not pushed to subscribers.
    public var idempotencyKey: String
    /// The kind of route the record is on: `.order`, or `.config` for a feature toggle (whose app is `line` and
    /// name `orderID`).
    public var kind: RouteKind = .order

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
        self.kind = kind
        self.orderID = orderID
        self.line = line
        self.fromState = fromState
        self.toState = toState
        self.fields = fields
        self.position = position
        self.timestampMillis = timestampMillis
        self.idempotencyKey = idempotencyKey
    }

    /// The route this record is pushed on.
    public var route: Route { kind == .order ? .order(line, orderID) : .record(kind, line, orderID) }
}

/// An order as it is now: its current state, the merged fields and the position of its last record.
public struct OrderSnapshot: Hashable, Sendable {
    /// The order.
    public var orderID: OrderID
    /// Its business line.
    public var line: BusinessLine
    /// Its current state.
    public var state: OrderState
    /// All fields set so far, merged.
    public var fields: OrderFields
    /// Position of the last record applied.
    public var position: StreamPosition
    /// When the first record was accepted (ms since the Unix epoch).
    public var createdAtMillis: UInt64
    /// When the last record was accepted (ms since the Unix epoch).
    public var updatedAtMillis: UInt64
    /// The kind of route: `.order`, or `.config` for a feature toggle.
    public var kind: RouteKind = .order

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
        self.kind = kind
        self.orderID = orderID
        self.line = line
        self.state = state
        self.fields = fields
        self.position = position
        self.createdAtMillis = createdAtMillis
        self.updatedAtMillis = updatedAtMillis
    }

    /// The route of this order (or toggle).
    public var route: Route { kind == .order ? .order(line, orderID) : .record(kind, line, orderID) }

    /// The snapshot after `record` is applied on top of it.
    public func applying(_ record: OrderChangeRecord) -> OrderSnapshot {
        OrderSnapshot(
            orderID: orderID,
            line: line,
            state: record.toState,
            fields: fields.merging(record.fields),
            position: record.position,
            createdAtMillis: createdAtMillis,
            updatedAtMillis: record.timestampMillis,
            kind: kind
        )
    }

    /// The snapshot of a new order made by its first record.
    public init(first record: OrderChangeRecord) {
        self.init(
            orderID: record.orderID,
            line: record.line,
            state: record.toState,
            fields: record.fields,
            position: record.position,
            createdAtMillis: record.timestampMillis,
            updatedAtMillis: record.timestampMillis,
            kind: record.kind
        )
    }
}
