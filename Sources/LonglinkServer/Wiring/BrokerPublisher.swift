import LonglinkCore
import LonglinkGateway

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
