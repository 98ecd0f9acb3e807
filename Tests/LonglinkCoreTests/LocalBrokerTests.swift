import LonglinkCore
import Synchronization
import Testing

final class CollectingDelivery: BrokerDelivery {
    let records = Mutex<[OrderChangeRecord]>([])
    func brokerDidDeliver(_ record: OrderChangeRecord) { records.withLock { $0.append(record) } }
}

@Suite("LocalBroker")
struct LocalBrokerTests {
    func record(_ id: String, _ offset: UInt64) -> OrderChangeRecord {
        OrderChangeRecord(
            orderID: OrderID(id)!,
            line: .taxi,
            fromState: nil,
            toState: "created",
            fields: .none,
            position: StreamPosition(epoch: 1, offset: offset),
            timestampMillis: 0
        )
    }

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
