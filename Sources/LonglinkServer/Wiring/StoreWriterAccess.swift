import LonglinkCore
import LonglinkGateway
import LonglinkStores

/// The gateway's `StoreAccess` seam over the real single writer.
struct StoreWriterAccess: StoreAccess {
    let writer: StoreWriter
    /// The lines the store serves: a subscribe to an order of another line is refused with `unknown_line` at once,
    /// instead of waiting forever for an order that can never exist.
    let catalog: StateMachineCatalog

    func apply(_ change: OrderChange, completion: @escaping @Sendable (Result<AppliedChange, StoreError>) -> Void) {
        writer.apply(change, completion: completion)
    }

    func applyQueued(_ change: OrderChange, completion: @escaping @Sendable (Result<AppliedChange, StoreError>) -> Void) {
        writer.apply(change, deferred: true, completion: completion)
    }

    func readForSubscribeQueued(
        _ line: BusinessLine,
        _ order: OrderID,
        since: StreamPosition?,
        limit: Int,
        completion: @escaping @Sendable (Result<SubscribeRead, StoreError>) -> Void
    ) {
        catchUp(line, order, since: since, limit: limit, deferred: true, completion: completion)
    }

    func commitQueued() {
        writer.commitQueued()
    }

    /// The subscribe read is the writer's `catchUp`: snapshot and missed records in one writer-thread step.
    func readForSubscribe(
        _ line: BusinessLine,
        _ order: OrderID,
        since: StreamPosition?,
        limit: Int,
        completion: @escaping @Sendable (Result<SubscribeRead, StoreError>) -> Void
    ) {
        catchUp(line, order, since: since, limit: limit, deferred: false, completion: completion)
    }

    private func catchUp(
        _ line: BusinessLine,
        _ order: OrderID,
        since: StreamPosition?,
        limit: Int,
        deferred: Bool,
        completion: @escaping @Sendable (Result<SubscribeRead, StoreError>) -> Void
    ) {
        do {
            _ = try ChangeValidation.machine(for: line, in: catalog)
        } catch {
            return completion(.failure(error))
        }
        writer.catchUp(line, order, after: since, limit: limit, deferred: deferred) { result in
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

    /// One broker call per commit batch (a broker hands the batch on whole).
    func publish(_ records: [OrderChangeRecord]) {
        do {
            try broker.publish(contentsOf: records)
        } catch {
            counters?.recordBrokerError()
            logger.error("broker publish failed: \(error)", [("records", "\(records.count)")])
        }
    }
}
