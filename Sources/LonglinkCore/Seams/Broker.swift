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
    /// Publishes the records of one commit, in order: one call per batch, so a broker can take its lock once and
    /// hand the batch on whole (`BrokerDelivery.brokerDidDeliver(contentsOf:)`). Every record is tried; the first
    /// error is thrown after the last.
    func publish(contentsOf records: [OrderChangeRecord]) throws(BrokerError)
    /// Stops delivery and releases resources.
    func shutdown()
    /// Calls `body` (on any thread) once records of `routes` published from now on are sure to be delivered: at
    /// once for an in-process broker, after the backend confirmed the subscription for a networked one. The
    /// gateway reads a new subscriber's snapshot only then, so no record can fall between the snapshot and the
    /// first push. Call after `subscribe`.
    func whenSubscribed(_ routes: [Route], _ body: @escaping @Sendable () -> Void)
}

extension Broker {
    /// Publishes the records one by one with `publish(_:)`.
    public func publish(contentsOf records: [OrderChangeRecord]) throws(BrokerError) {
        var firstError: BrokerError?
        for record in records {
            do {
                try publish(record)
            } catch {
                if firstError == nil { firstError = error }
            }
        }
        if let firstError { throw firstError }
    }

    /// In-process brokers deliver from the moment `subscribe` returns: runs `body` at once.
    public func whenSubscribed(_ routes: [Route], _ body: @escaping @Sendable () -> Void) { body() }
}

/// Receives records from a broker (on the broker's thread); implementations hop to event loops via their inbox.
/// Class-bound: a broker keeps the receiver and hands it out per batch, which is then one retain, not an existential
/// copy.
public protocol BrokerDelivery: AnyObject, Sendable {
    /// One record for a route this node subscribed to.
    func brokerDidDeliver(_ record: OrderChangeRecord)
    /// Several records for routes this node subscribed to, in publish order (one batch: a delivery that hops to
    /// other threads can hand it over as one job per thread instead of one per record).
    func brokerDidDeliver(contentsOf records: [OrderChangeRecord])
    /// `brokerDidDeliver(contentsOf:)` with each record's route (`routes[i] == records[i].route`), from a broker
    /// that built them anyway to filter, so the delivery need not build them again.
    func brokerDidDeliver(contentsOf records: [OrderChangeRecord], routes: [Route])
    /// The broker lost its backend (e.g. Redis restarted) and is subscribed again: records of `routes` published
    /// meanwhile may not have been delivered. The gateway has the subscribers of these routes resume from their
    /// positions (the store has the records, or answers `recovered = false` when the history was lost).
    func brokerMayHaveMissed(_ routes: [Route])
}

extension BrokerDelivery {
    /// Delivers the records one by one with `brokerDidDeliver(_:)`.
    public func brokerDidDeliver(contentsOf records: [OrderChangeRecord]) {
        for record in records { brokerDidDeliver(record) }
    }

    /// Ignores the routes: `brokerDidDeliver(contentsOf:)`.
    public func brokerDidDeliver(contentsOf records: [OrderChangeRecord], routes: [Route]) {
        brokerDidDeliver(contentsOf: records)
    }

    /// Does nothing: deliveries that cannot lose records (tests, single process) need not implement it.
    public func brokerMayHaveMissed(_ routes: [Route]) {}
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
