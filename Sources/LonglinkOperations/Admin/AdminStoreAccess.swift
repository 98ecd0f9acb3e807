public import LonglinkCore

/// The Store as the admin API needs it: apply a change, read an order with its retained history, and a cheap
/// probe for readiness. Completions may run on any thread (the Store's writer). The composition root adapts the
/// real `StoreWriter` to it; the gateway itself never holds a store.
public protocol AdminStoreAccess: Sendable {
    /// Applies a change; `completion` runs once it is durable (or refused).
    func apply(_ change: OrderChange, completion: @escaping @Sendable (Result<AppliedChange, StoreError>) -> Void)

    /// Reads an order's snapshot and every retained record; nil when the order does not exist.
    func history(
        _ line: BusinessLine,
        _ order: OrderID,
        completion: @escaping @Sendable (Result<OrderHistory?, StoreError>) -> Void
    )

    /// Answers with the store's epoch once the writer has processed everything queued before: proof that the Store
    /// is open and keeping up.
    func probe(completion: @escaping @Sendable (Result<UInt32, StoreError>) -> Void)
}

/// An order and its retained history, oldest record first.
public struct OrderHistory: Sendable, Hashable {
    /// The order now.
    public var snapshot: OrderSnapshot
    /// Retained records, oldest first.
    public var records: [OrderChangeRecord]

    /// Creates a history.
    public init(snapshot: OrderSnapshot, records: [OrderChangeRecord]) {
        self.snapshot = snapshot
        self.records = records
    }
}
