import Foundation
import LonglinkCore
import Testing

/// The checks only a broker of several nodes has something to show for: run them with `BrokerContract.checks`
/// against networked brokers, whose factory gives `node` and `dropConnections`.
///
/// ```swift
/// @Test("keeps the networked Broker contract", arguments: BrokerContract.networkedChecks)
/// func networked(_ check: BrokerContractCheck) throws { try check.run(.redis(server)) }
/// ```
extension BrokerContract {
    /// Every check for brokers of several nodes.
    public static let networkedChecks: [BrokerContractCheck] = [
        BrokerContractCheck("every subscribing node gets every record of its route, in order", run: everyNode),
        BrokerContractCheck(
            "after the backend drops its connections the broker subscribes again, says it may have missed its routes, and delivers",
            run: reconnects
        ),
    ]

    /// Two subscribing nodes and a publishing one: both subscribers get all 30 records, in order, once.
    public static func everyNode(_ factory: BrokerContractFactory) throws {
        let node = try #require(factory.node, "a networked factory gives a third node")
        try withNodes(factory) { publisher, subscriber, received, _ in
            let second = try node()
            let alsoReceived = Received()
            try second.start(delivering: alsoReceived)
            defer { second.shutdown() }
            let tag = UUID().uuidString.prefix(8)
            let route = route("n\(tag)")
            eventually("the third node accepts subscriptions", timeout: .seconds(20)) { (try? second.subscribe([route])) != nil }
            try subscriber.subscribe([route])
            try #require(subscribed(subscriber, [route]) && subscribed(second, [route]))
            let records = (1...30).map { record("n\(tag)", UInt64($0)) }
            for record in records.prefix(10) { try publisher.publish(record) }
            try publisher.publish(contentsOf: Array(records[10...]))
            eventually("both nodes got 30 records", timeout: .seconds(20)) {
                received.records(of: route).count >= 30 && alsoReceived.records(of: route).count >= 30
            }
            settle(factory)
            #expect(received.records(of: route) == records, "the first node")
            #expect(alsoReceived.records(of: route) == records, "the second node")
        }
    }

    /// The subscriber's connections are killed at the backend: the broker reconnects, subscribes its routes again,
    /// tells its delivery `brokerMayHaveMissed` for them, and delivers what is published afterwards, without
    /// repeating what it delivered before.
    public static func reconnects(_ factory: BrokerContractFactory) throws {
        let drop = try #require(factory.dropConnections, "a networked factory can drop the connections")
        try withNodes(factory) { publisher, subscriber, received, _ in
            let tag = UUID().uuidString.prefix(8)
            let (held, line) = (route("re\(tag)"), Route.lineWide(.order, BusinessLine.premium.name))
            try subscriber.subscribe([held, line])
            try #require(subscribed(subscriber, [held, line]))
            try publisher.publish(record("re\(tag)", 1))
            eventually("the first record arrived") { received.records(of: held).count == 1 }
            #expect(received.missedRoutes.isEmpty)
            try drop()
            eventually("the delivery heard it may have missed both routes", timeout: .seconds(30)) {
                Set(received.missedRoutes).isSuperset(of: [held, line])
            }
            try #require(subscribed(subscriber, [held, line]))
            let next = record("re\(tag)", 2)
            let premium = record("rp\(tag)", 1, line: .premium)
            // The publishing node may be reconnecting too: it refuses (`unavailable`) until it is back.
            eventually("the publisher accepts again", timeout: .seconds(20)) { (try? publisher.publish(next)) != nil }
            eventually("the premium record is accepted", timeout: .seconds(20)) { (try? publisher.publish(premium)) != nil }
            eventually("the records published after the reconnect arrived", timeout: .seconds(20)) {
                received.records(of: held).count >= 2 && received.records(of: premium.route).count >= 1
            }
            settle(factory)
            #expect(received.records(of: held).map(\.position.offset) == [1, 2])
            #expect(received.records(of: premium.route).count == 1)
        }
    }
}
