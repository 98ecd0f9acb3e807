import Foundation
public import LonglinkCore
import Synchronization
public import Testing

/// How the broker contract obtains brokers: two "nodes" on one backend, not started. An in-process broker returns
/// the same instance twice (it is one node), a networked one two instances on the same server or cluster.
public struct BrokerContractFactory: Sendable {
    /// A name for test output.
    public var name: String
    /// The publishing node and the subscribing node.
    public var make: @Sendable () throws -> (publisher: any Broker, subscriber: any Broker)
    /// Whether the two are separate nodes (records cross a network).
    public var networked: Bool

    public init(name: String, networked: Bool, make: @escaping @Sendable () throws -> (publisher: any Broker, subscriber: any Broker)) {
        self.name = name
        self.networked = networked
        self.make = make
    }

    /// `LocalBroker`: one node.
    public static let local = BrokerContractFactory(name: "local", networked: false) {
        let broker = LocalBroker()
        return (broker, broker)
    }
}

/// One check of `BrokerContract`, runnable as a parameterized test argument.
public struct BrokerContractCheck: Sendable, CustomTestStringConvertible {
    /// What the check verifies, as a sentence.
    public var name: String
    /// Runs the check against brokers from the factory.
    public var run: @Sendable (BrokerContractFactory) throws -> Void

    public init(_ name: String, run: @escaping @Sendable (BrokerContractFactory) throws -> Void) {
        self.name = name
        self.run = run
    }

    public var testDescription: String { name }
}

/// The behaviour every `Broker` must show (the `Broker` protocol's contract), run by each implementation's tests:
///
/// ```swift
/// @Test("keeps the Broker contract", arguments: BrokerContract.checks)
/// func contract(_ check: BrokerContractCheck) throws { try check.run(.local) }
/// ```
public enum BrokerContract {
    /// Every check.
    public static let checks: [BrokerContractCheck] = [
        BrokerContractCheck("records of a subscribed route arrive once, in publish order", run: orderedOnce),
        BrokerContractCheck("only subscribed routes are delivered, and nothing after unsubscribe", run: onlySubscribed),
        BrokerContractCheck("subscriptions are counted per route", run: counted),
        BrokerContractCheck("whenSubscribed runs for new and held routes", run: whenSubscribed),
    ]

    /// A record of taxi order `id` at `offset`.
    public static func record(_ id: String, _ offset: UInt64) -> OrderChangeRecord {
        OrderChangeRecord(
            orderID: OrderID(id)!,
            line: .taxi,
            fromState: offset == 1 ? nil : "created",
            toState: offset == 1 ? "created" : "dispatching",
            fields: OrderFields(driverID: "d-\(offset)", payload: [UInt8(truncatingIfNeeded: offset)]),
            position: StreamPosition(epoch: 7, offset: offset),
            timestampMillis: 1_000 + offset
        )
    }

    /// The route of taxi order `id`.
    public static func route(_ id: String) -> Route { .order(.taxi, OrderID(id)!) }

    /// Records 50 changes of one order from the publishing node, in singles and batches.
    public static func orderedOnce(_ factory: BrokerContractFactory) throws {
        try withNodes(factory) { publisher, subscriber, received, sent in
            let tag = UUID().uuidString.prefix(8)
            let route = route("o\(tag)")
            try subscriber.subscribe([route])
            try #require(subscribed(subscriber, [route]))
            let records = (1...50).map { record("o\(tag)", UInt64($0)) }
            for record in records.prefix(10) { try publisher.publish(record) }
            try publisher.publish(contentsOf: Array(records[10..<30]))
            try publisher.publish(contentsOf: Array(records[30...]))
            #expect(eventually { received.records(of: route).count >= 50 })
            settle(factory)
            #expect(received.records(of: route) == records)
            if factory.networked { #expect(sent.records(of: route).isEmpty) }  // the publisher did not subscribe
        }
    }

    /// A route never subscribed, and one unsubscribed, get nothing.
    public static func onlySubscribed(_ factory: BrokerContractFactory) throws {
        try withNodes(factory) { publisher, subscriber, received, _ in
            let tag = UUID().uuidString.prefix(8)
            let (kept, other, dropped) = (route("k\(tag)"), route("x\(tag)"), route("u\(tag)"))
            try subscriber.subscribe([kept, dropped])
            try #require(subscribed(subscriber, [kept, dropped]))
            try publisher.publish(record("x\(tag)", 1))
            try publisher.publish(record("u\(tag)", 1))
            try publisher.publish(record("k\(tag)", 1))
            #expect(eventually { received.records(of: kept).count == 1 && received.records(of: dropped).count == 1 })
            try subscriber.unsubscribe([dropped])
            // Calls are handled in order: once a later subscription is confirmed, the unsubscribe took effect.
            let marker = route("m\(tag)")
            try subscriber.subscribe([marker])
            try #require(subscribed(subscriber, [marker]))
            try publisher.publish(record("u\(tag)", 2))
            try publisher.publish(record("m\(tag)", 1))
            #expect(eventually { received.records(of: marker).count == 1 })
            settle(factory)
            #expect(received.records(of: other).isEmpty)
            #expect(received.records(of: dropped).map(\.position.offset) == [1])
        }
    }

    /// Two subscribes need two unsubscribes.
    public static func counted(_ factory: BrokerContractFactory) throws {
        try withNodes(factory) { publisher, subscriber, received, _ in
            let tag = UUID().uuidString.prefix(8)
            let route = route("c\(tag)")
            try subscriber.subscribe([route])
            try subscriber.subscribe([route])
            try #require(subscribed(subscriber, [route]))
            try subscriber.unsubscribe([route])
            let marker = Self.route("cm\(tag)")
            try subscriber.subscribe([marker])
            try #require(subscribed(subscriber, [marker]))
            try publisher.publish(record("c\(tag)", 1))
            #expect(eventually { received.records(of: route).count == 1 })
            try subscriber.unsubscribe([route])
            try subscriber.unsubscribe([marker])
            let second = Self.route("cn\(tag)")
            try subscriber.subscribe([second])
            try #require(subscribed(subscriber, [second]))
            try publisher.publish(record("c\(tag)", 2))
            try publisher.publish(record("cn\(tag)", 1))
            #expect(eventually { received.records(of: second).count == 1 })
            settle(factory)
            #expect(received.records(of: route).map(\.position.offset) == [1])
        }
    }

    /// The callback runs for a new route (after the backend confirmed it) and for one already held.
    public static func whenSubscribed(_ factory: BrokerContractFactory) throws {
        try withNodes(factory) { _, subscriber, _, _ in
            let tag = UUID().uuidString.prefix(8)
            let routes = (0..<20).map { route("w\(tag)-\($0)") }
            try subscriber.subscribe(routes)
            #expect(subscribed(subscriber, routes))
            #expect(subscribed(subscriber, [routes[3]]))
        }
    }

    // MARK: Helpers

    /// What a node's delivery received.
    public final class Received: BrokerDelivery {
        private let all = Mutex<[OrderChangeRecord]>([])
        private let missed = Mutex<[Route]>([])

        public init() {}

        public func brokerDidDeliver(_ record: OrderChangeRecord) { all.withLock { $0.append(record) } }
        public func brokerDidDeliver(contentsOf records: [OrderChangeRecord]) { all.withLock { $0 += records } }
        public func brokerMayHaveMissed(_ routes: [Route]) { missed.withLock { $0 += routes } }

        /// Routes the broker said it may have missed, in order.
        public var missedRoutes: [Route] { missed.withLock { $0 } }

        /// Every record, in arrival order.
        public var allRecords: [OrderChangeRecord] { all.withLock { $0 } }

        /// The records of one route, in arrival order.
        public func records(of route: Route) -> [OrderChangeRecord] { all.withLock { $0.filter { $0.route == route } } }
    }

    /// Starts both nodes with their own delivery, runs `body`, shuts them down.
    static func withNodes(
        _ factory: BrokerContractFactory,
        _ body: (any Broker, any Broker, Received, Received) throws -> Void
    ) throws {
        let (publisher, subscriber) = try factory.make()
        let received = Received()
        let sent = factory.networked ? Received() : received
        try subscriber.start(delivering: received)
        if factory.networked { try publisher.start(delivering: sent) }
        defer {
            subscriber.shutdown()
            if factory.networked { publisher.shutdown() }
        }
        if factory.networked {
            // Networked brokers connect in the background: wait until subscribing is accepted.
            let probe = record("probe-\(UUID().uuidString.prefix(8))", 1)
            #expect(eventually(timeout: .seconds(20)) { (try? subscriber.subscribe([])) != nil && (try? publisher.publish(probe)) != nil })
        }
        try body(publisher, subscriber, received, sent)
    }

    /// Whether `whenSubscribed` ran within 20 s.
    public static func subscribed(_ broker: any Broker, _ routes: [Route]) -> Bool {
        let done = DispatchSemaphore(value: 0)
        broker.whenSubscribed(routes) { done.signal() }
        return done.wait(timeout: .now() + 20) == .success
    }

    /// Gives a networked broker time to deliver anything it should not have.
    static func settle(_ factory: BrokerContractFactory) {
        if factory.networked { usleep(200_000) }
    }

    /// Polls `condition` until it holds or `timeout` passes.
    static func eventually(timeout: Duration = .seconds(10), _ condition: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition() { return true }
            usleep(5_000)
        }
        return condition()
    }
}
