import LonglinkCore
import LonglinkStores

/// The Store reads the admin and backend APIs make through the single writer (their publishes use
/// `StoreWriter.apply`). Completions run on the writer thread.
extension StoreWriter {
    /// Reads an order's snapshot and every retained record; nil when the order does not exist.
    func orderHistory(
        _ line: BusinessLine,
        _ order: OrderID,
        completion: @escaping @Sendable (Result<OrderHistory?, StoreError>) -> Void
    ) {
        read(
            { (store) throws(StoreError) -> OrderHistory? in
                try store.retainedHistory(of: line, order).map { OrderHistory(snapshot: $0.snapshot, records: $0.history) }
            },
            completion: completion
        )
    }

    /// Answers with the store's epoch once the writer has processed everything queued before: proof that the Store
    /// is open and keeping up.
    func probe(completion: @escaping @Sendable (Result<UInt32, StoreError>) -> Void) {
        read({ store in store.epoch }, completion: completion)
    }
}

/// An order and its retained history, oldest record first.
struct OrderHistory: Sendable, Hashable {
    /// The order now.
    var snapshot: OrderSnapshot
    /// Retained records, oldest first.
    var records: [OrderChangeRecord]
}
