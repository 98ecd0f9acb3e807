/// Moves stored records to every event loop (and, with Redis, every node) that has subscribers for their
/// route. `LocalBroker` serves one process; a Redis broker serves several nodes through the same contract.
///
/// Contract: records of one route are delivered in the order they were published; `publish` never blocks on
/// a slow loop; nothing in a call depends on the caller being in the same process as the subscribers.
public protocol Broker: Sendable {
    /// Starts delivery to `handler`. Called once, before any other method.
    func start(delivering handler: any BrokerDelivery) throws(BrokerError)
    /// Asks for records of `routes` (reference-counted by the caller: one subscribe per route per node).
    func subscribe(_ routes: [Route]) throws(BrokerError)
    /// Stops asking for records of `routes`.
    func unsubscribe(_ routes: [Route]) throws(BrokerError)
    /// Publishes a stored record to every subscriber of its route.
    func publish(_ record: OrderChangeRecord) throws(BrokerError)
    /// Stops delivery and releases resources.
    func shutdown()
}

/// Receives records from a broker (on the broker's thread); implementations hop to event loops via their inbox.
public protocol BrokerDelivery: Sendable {
    /// One record for a route this node subscribed to.
    func brokerDidDeliver(_ record: OrderChangeRecord)
}

/// Why the broker could not do what was asked.
public enum BrokerError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The broker's backend is unreachable; the call may be retried.
    case unavailable(String)
    /// The broker was shut down or not started.
    case notRunning

    public var description: String {
        switch self {
        case .unavailable(let why): "BrokerError: unavailable: \(why)"
        case .notRunning: "BrokerError: broker not running"
        }
    }
}
