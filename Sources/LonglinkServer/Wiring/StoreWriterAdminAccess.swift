import LonglinkCore
import LonglinkGateway
import LonglinkStores

/// The admin API's `AdminStoreAccess` over the real single writer.
struct StoreWriterAdminAccess: AdminStoreAccess {
    let writer: StoreWriter

    func apply(_ change: OrderChange, completion: @escaping @Sendable (Result<AppliedChange, StoreError>) -> Void) {
        writer.apply(change, completion: completion)
    }

    func history(
        _ line: BusinessLine,
        _ order: OrderID,
        completion: @escaping @Sendable (Result<OrderHistory?, StoreError>) -> Void
    ) {
        writer.read(
            { (store) throws(StoreError) -> OrderHistory? in
                try store.retainedHistory(of: line, order).map { OrderHistory(snapshot: $0.snapshot, records: $0.history) }
            },
            completion: completion
        )
    }

    func probe(completion: @escaping @Sendable (Result<UInt32, StoreError>) -> Void) {
        writer.read({ store in store.epoch }, completion: completion)
    }
}
