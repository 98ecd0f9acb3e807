import LonglinkCore
import LonglinkGateway
import LonglinkStores

/// The gateway's `StoreAccess` seam over the real single writer.
struct StoreWriterAccess: StoreAccess {
    let writer: StoreWriter

    func apply(_ change: OrderChange, completion: @escaping @Sendable (Result<AppliedChange, StoreError>) -> Void) {
        writer.apply(change, completion: completion)
    }

    /// The subscribe read is the writer's `catchUp`: snapshot and missed records in one writer-thread step.
    func readForSubscribe(
        _ line: BusinessLine,
        _ order: OrderID,
        since: StreamPosition?,
        limit: Int,
        completion: @escaping @Sendable (Result<SubscribeRead, StoreError>) -> Void
    ) {
        writer.catchUp(line, order, after: since, limit: limit) { result in
            completion(result.map { SubscribeRead(epoch: $0.epoch, snapshot: $0.snapshot, history: $0.history) })
        }
    }
}

/// Publishes every durable change to the broker, called by the Store's writer right after each commit (its
/// `committed` hook): the broker path must never drop a record and should not pay an extra thread hop.
final class BrokerPublisher: Sendable {
    let broker: any Broker
    let logger: Logger
    let counters: GatewayCounters?

    init(broker: any Broker, logger: Logger, counters: GatewayCounters? = nil) {
        self.broker = broker
        self.logger = logger
        self.counters = counters
    }

    func publish(_ records: [OrderChangeRecord]) {
        for record in records {
            do {
                try broker.publish(record)
            } catch {
                counters?.recordBrokerError()
                logger.error("broker publish failed: \(error)", [("route", record.route.text)])
            }
        }
    }
}
