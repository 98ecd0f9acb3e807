import LonglinkCore
import LonglinkTestSupport
import Synchronization
import Testing

final class CollectingDelivery: BrokerDelivery {
    let records = Mutex<[OrderChangeRecord]>([])
    func brokerDidDeliver(_ record: OrderChangeRecord) { records.withLock { $0.append(record) } }
}

/// A first record of taxi order `id` at `offset` (epoch 1).
func record(_ id: String, _ offset: UInt64, line: BusinessLine = .taxi) -> OrderChangeRecord {
    OrderChangeRecord(
        orderID: OrderID(id)!,
        line: line,
        fromState: nil,
        toState: "created",
        fields: .none,
        position: StreamPosition(epoch: 1, offset: offset),
        timestampMillis: 0
    )
}

@Suite("LocalBroker", .ownThreads)
struct LocalBrokerTests {
    @Test("delivers subscribed routes in publish order and nothing else")
    func delivery() throws {
        let broker = LocalBroker()
        let delivery = CollectingDelivery()
        try broker.start(delivering: delivery)
        try broker.subscribe([Route.order(.taxi, OrderID("1")!)])
        for offset in 1...5 { try broker.publish(record("1", UInt64(offset))) }
        try broker.publish(record("2", 1))
        #expect(delivery.records.withLock { $0.map(\.position.offset) } == [1, 2, 3, 4, 5])
    }

    @Test("subscriptions are reference-counted")
    func refcount() throws {
        let broker = LocalBroker()
        let delivery = CollectingDelivery()
        try broker.start(delivering: delivery)
        let route = Route.order(.taxi, OrderID("1")!)
        try broker.subscribe([route])
        try broker.subscribe([route])
        try broker.unsubscribe([route])
        try broker.publish(record("1", 1))
        try broker.unsubscribe([route])
        try broker.publish(record("1", 2))
        #expect(delivery.records.withLock { $0.count } == 1)
        #expect(broker.subscribedRouteCount == 0)
    }

    @Test("publishing after shutdown is an error, not a silent drop")
    func afterShutdown() throws {
        let broker = LocalBroker()
        try broker.start(delivering: CollectingDelivery())
        broker.shutdown()
        #expect(throws: BrokerError.notRunning) { try broker.publish(record("1", 1)) }
    }
}

/// Records each batch the broker hands over.
final class BatchDelivery: BrokerDelivery {
    let batches = Mutex<[[OrderChangeRecord]]>([])
    func brokerDidDeliver(_ record: OrderChangeRecord) { batches.withLock { $0.append([record]) } }
    func brokerDidDeliver(contentsOf records: [OrderChangeRecord]) { batches.withLock { $0.append(records) } }
}

@Suite("LocalBroker batches", .ownThreads)
struct LocalBrokerBatchTests {
    @Test("a commit's records go on as one batch of the subscribed ones, in order")
    func batch() throws {
        let broker = LocalBroker()
        let delivery = BatchDelivery()
        try broker.start(delivering: delivery)
        try broker.subscribe([Route.order(.taxi, OrderID("1")!), Route.order(.taxi, OrderID("3")!)])
        try broker.publish(contentsOf: [record("1", 1), record("2", 1), record("3", 1), record("1", 2)])
        try broker.publish(contentsOf: [record("2", 2)])
        let batches = delivery.batches.withLock { $0 }
        #expect(batches.count == 1)
        #expect(batches.first?.map { "\($0.orderID)/\($0.position.offset)" } == ["1/1", "3/1", "1/2"])
        broker.shutdown()
        #expect(throws: BrokerError.notRunning) { try broker.publish(contentsOf: [record("1", 3)]) }
    }

    @Test("a batch wanted whole goes on whole, and a line-wide subscription takes every record of its line")
    func wholeAndLineWide() throws {
        let broker = LocalBroker()
        let delivery = BatchDelivery()
        try broker.start(delivering: delivery)
        try broker.subscribe([Route.order(.taxi, OrderID("1")!), Route.lineWide(.order, "express")])
        let express = record("9", 1, line: .express)
        try broker.publish(contentsOf: [record("1", 1), express])
        try broker.publish(contentsOf: [record("2", 1), record("1", 2), express])
        let batches = delivery.batches.withLock { $0 }
        #expect(batches.map { $0.map { "\($0.line)/\($0.orderID)/\($0.position.offset)" } } == [
            ["taxi/1/1", "express/9/1"], ["taxi/1/2", "express/9/1"],
        ])
        try broker.unsubscribe([Route.lineWide(.order, "express")])
        try broker.publish(contentsOf: [express])
        #expect(delivery.batches.withLock { $0.count } == 2)
    }

    @Test("the default batch publish tries every record and throws the first error")
    func defaultBatch() throws {
        let broker = FailingBroker()
        #expect(throws: BrokerError.unavailable("2")) {
            try broker.publish(contentsOf: [record("1", 1), record("2", 1), record("3", 1)])
        }
        #expect(broker.tried.withLock { $0 } == ["1", "2", "3"])
    }
}

/// A broker that refuses records of order "2" (to check the protocol's default batch publish).
final class FailingBroker: Broker {
    let tried = Mutex<[String]>([])
    func start(delivering handler: any BrokerDelivery) throws(BrokerError) {}
    func subscribe(_ routes: [Route]) throws(BrokerError) {}
    func unsubscribe(_ routes: [Route]) throws(BrokerError) {}
    func publish(_ record: OrderChangeRecord) throws(BrokerError) {
        tried.withLock { $0.append(record.orderID.rawValue) }
        if record.orderID.rawValue == "2" { throw .unavailable("2") }
    }
    func shutdown() {}
}

@Suite("LocalBroker contract", .ownThreads)
struct LocalBrokerContractTests {
    @Test("keeps the Broker contract", arguments: BrokerContract.checks)
    func contract(_ check: BrokerContractCheck) throws { try check.run(.local) }

    @Test("each check fails on a broker with the fault it is there to catch", arguments: BrokerContract.faultCases)
    func catchesItsFault(_ check: BrokerContractCheck, _ fault: BrokerFault) {
        withKnownIssue("a LocalBroker that \(fault) must fail this check") { try check.run(BrokerContractFactory.local.broken(by: fault)) }
    }
}
