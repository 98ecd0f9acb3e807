import LonglinkCore
import LonglinkGateway
import LonglinkStores

/// The gateway's `StoreAccess` seam over the real single writer.
struct StoreWriterAccess: StoreAccess {
    let writer: StoreWriter

    func apply(_ change: OrderChange, completion: @escaping @Sendable (Result<AppliedChange, StoreError>) -> Void) {
        writer.apply(change, completion: completion)
    }

    /// Reads the snapshot and the records after `since` in one writer-thread step, so nothing can commit in
    /// between. A position with epoch 0 means "from the start of the current epoch" (`orders show`).
    func readForSubscribe(
        _ line: BusinessLine,
        _ order: OrderID,
        since: StreamPosition?,
        limit: Int,
        completion: @escaping @Sendable (Result<SubscribeRead, StoreError>) -> Void
    ) {
        writer.read(
            { (store) throws(StoreError) -> SubscribeRead in
                let snapshot = try store.snapshot(of: line, order)
                var history: HistoryRead?
                if var since {
                    if since.epoch == 0 && since.offset == 0 { since.epoch = store.epoch }
                    history = try store.records(of: line, order, after: since, limit: limit)
                }
                return SubscribeRead(epoch: store.epoch, snapshot: snapshot, history: history)
            },
            completion: completion
        )
    }
}

/// Publishes every durable change to the broker, called by the Store's writer right after each commit (its
/// `committed` hook): the broker path must never drop a record and should not pay an extra thread hop.
final class BrokerPublisher: Sendable {
    let broker: any Broker
    let logger: Logger

    init(broker: any Broker, logger: Logger) {
        self.broker = broker
        self.logger = logger
    }

    func publish(_ records: [OrderChangeRecord]) {
        for record in records {
            do {
                try broker.publish(record)
            } catch {
                logger.error("broker publish failed: \(error)", [("route", record.route.text)])
            }
        }
    }
}
