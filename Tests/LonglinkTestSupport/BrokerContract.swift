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
    /// One more node on the same backend, for the checks with several subscribing nodes (networked brokers).
    public var node: (@Sendable () throws -> any Broker)?
    /// Cuts the brokers' subscriber connections at the backend (`CLIENT KILL TYPE pubsub`), for the reconnect check
    /// (networked brokers).
    public var dropConnections: (@Sendable () throws -> Void)?

    public init(
        name: String,
        networked: Bool,
        node: (@Sendable () throws -> any Broker)? = nil,
        dropConnections: (@Sendable () throws -> Void)? = nil,
        make: @escaping @Sendable () throws -> (publisher: any Broker, subscriber: any Broker)
    ) {
        self.name = name
        self.networked = networked
        self.node = node
        self.dropConnections = dropConnections
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
        BrokerContractCheck("records of several routes published interleaved keep each route's order", run: interleaved),
        BrokerContractCheck("a route subscribed again after an unsubscribe is delivered again", run: resubscribed),
        BrokerContractCheck("a line-wide route gets every order of its line, nothing of other lines, nothing after unsubscribe", run: lineWide),
        BrokerContractCheck("a node holding an order's route and its line-wide route gets each record once", run: routeAndLineOnce),
    ]

    /// A record of order `id` of `line` (taxi by default) at `offset`.
    public static func record(_ id: String, _ offset: UInt64, line: BusinessLine = .taxi) -> OrderChangeRecord {
        OrderChangeRecord(
            orderID: OrderID(id)!,
            line: line,
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

    /// Five routes, 20 records each, published round-robin in singles and in mixed batches.
    public static func interleaved(_ factory: BrokerContractFactory) throws {
        try withNodes(factory) { publisher, subscriber, received, _ in
            let tag = UUID().uuidString.prefix(8)
            let ids = (0..<5).map { "i\(tag)-\($0)" }
            let routes = ids.map { route($0) }
            try subscriber.subscribe(routes)
            try #require(subscribed(subscriber, routes))
            let rounds = (1...20).map { offset in ids.map { record($0, UInt64(offset)) } }
            for round in rounds.prefix(8) {
                for record in round { try publisher.publish(record) }
            }
            try publisher.publish(contentsOf: rounds[8..<14].flatMap { $0 })
            for round in rounds[14...] { try publisher.publish(contentsOf: round) }
            eventually("every record of the five routes arrived", timeout: .seconds(20)) {
                routes.allSatisfy { received.records(of: $0).count >= 20 }
            }
            settle(factory)
            for (id, route) in zip(ids, routes) {
                #expect(received.records(of: route).map(\.position.offset) == Array(1...20), "\(id)")
                #expect(received.records(of: route) == rounds.map { $0[ids.firstIndex(of: id)!] }, "\(id)")
            }
        }
    }

    /// Subscribe, unsubscribe, subscribe again: the first and the last record arrive, the middle one not.
    public static func resubscribed(_ factory: BrokerContractFactory) throws {
        try withNodes(factory) { publisher, subscriber, received, _ in
            let tag = UUID().uuidString.prefix(8)
            let route = route("r\(tag)")
            try subscriber.subscribe([route])
            try #require(subscribed(subscriber, [route]))
            try publisher.publish(record("r\(tag)", 1))
            eventually("the first record arrived") { received.records(of: route).count == 1 }
            try subscriber.unsubscribe([route])
            let marker = Self.route("rm\(tag)")
            try subscriber.subscribe([marker])
            try #require(subscribed(subscriber, [marker]))
            try publisher.publish(record("r\(tag)", 2))
            try publisher.publish(record("rm\(tag)", 1))
            eventually("the marker arrived") { received.records(of: marker).count == 1 }
            try subscriber.subscribe([route])
            try #require(subscribed(subscriber, [route]))
            try publisher.publish(record("r\(tag)", 3))
            eventually("the record after the new subscribe arrived") { received.records(of: route).count >= 2 }
            settle(factory)
            #expect(received.records(of: route).map(\.position.offset) == [1, 3])
        }
    }

    /// `order://taxi/*` gets the records of two taxi orders, in order, and none of an express order; after its
    /// unsubscribe, nothing more.
    public static func lineWide(_ factory: BrokerContractFactory) throws {
        try withNodes(factory) { publisher, subscriber, received, _ in
            let tag = UUID().uuidString.prefix(8)
            let line = Route.lineWide(.order, BusinessLine.taxi.name)
            let (a, b) = (route("la\(tag)"), route("lb\(tag)"))
            let other = Route.order(.express, OrderID("lx\(tag)")!)
            try subscriber.subscribe([line])
            try #require(subscribed(subscriber, [line]))
            let records = (1...10).flatMap { [record("la\(tag)", UInt64($0)), record("lb\(tag)", UInt64($0))] }
            for record in records.prefix(6) { try publisher.publish(record) }
            try publisher.publish(record("lx\(tag)", 1, line: .express))
            try publisher.publish(contentsOf: Array(records[6...]))
            eventually("both taxi orders' records arrived") {
                received.records(of: a).count >= 10 && received.records(of: b).count >= 10
            }
            try subscriber.unsubscribe([line])
            let marker = route("lm\(tag)")
            try subscriber.subscribe([marker])
            try #require(subscribed(subscriber, [marker]))
            try publisher.publish(record("la\(tag)", 11))
            try publisher.publish(record("lm\(tag)", 1))
            eventually("the marker arrived") { received.records(of: marker).count == 1 }
            settle(factory)
            #expect(received.records(of: a) == records.filter { $0.route == a })
            #expect(received.records(of: b) == records.filter { $0.route == b })
            #expect(received.records(of: other).isEmpty, "another line's record")
        }
    }

    /// A node whose clients hold `order://taxi/X` and `order://taxi/*` gets each record of X once (the gateway
    /// hands one record to both kinds of subscriber), and the line's other orders once too.
    public static func routeAndLineOnce(_ factory: BrokerContractFactory) throws {
        try withNodes(factory) { publisher, subscriber, received, _ in
            let tag = UUID().uuidString.prefix(8)
            let line = Route.lineWide(.order, BusinessLine.taxi.name)
            let (held, other) = (route("da\(tag)"), route("db\(tag)"))
            try subscriber.subscribe([held, line])
            try #require(subscribed(subscriber, [held, line]))
            let records = (1...10).flatMap { [record("da\(tag)", UInt64($0)), record("db\(tag)", UInt64($0))] }
            for record in records.prefix(8) { try publisher.publish(record) }
            try publisher.publish(contentsOf: Array(records[8...]))
            eventually("both orders' records arrived") {
                received.records(of: held).count >= 10 && received.records(of: other).count >= 10
            }
            settle(factory)
            #expect(received.records(of: held) == records.filter { $0.route == held }, "once each, in order")
            #expect(received.records(of: other) == records.filter { $0.route == other }, "once each, in order")
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

}
