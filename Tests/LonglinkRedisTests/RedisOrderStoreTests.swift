import Foundation
import LonglinkCore
import LonglinkRedis
import LonglinkTestSupport
import Synchronization
import Testing

extension OrderStoreFactory {
    /// `RedisOrderStore`s on the redis-server at `port`, each under a fresh key prefix (so a make is empty).
    static func redis(port: Int) -> OrderStoreFactory {
        let counter = Atomic<Int>(0)
        let address = RedisAddress(host: "127.0.0.1", port: port)
        return OrderStoreFactory(
            name: "redis",
            make: { setup in
                let prefix = "t\(counter.add(1, ordering: .relaxed).newValue)"
                return try RedisOrderStore(
                    address: address,
                    prefix: prefix,
                    catalog: setup.catalog,
                    retention: setup.retention,
                    clock: setup.clock
                )
            },
            reopen: { setup, old in
                guard let old = old as? RedisOrderStore else { throw NotRedisStore() }
                return try RedisOrderStore(
                    address: address,
                    prefix: old.prefix,
                    catalog: setup.catalog,
                    retention: setup.retention,
                    clock: setup.clock
                )
            }
        )
    }
}

/// `reopen` was given a store that is not a `RedisOrderStore`.
struct NotRedisStore: Error {}

@Suite("RedisOrderStore against a real redis-server", .ownThreads)
struct RedisOrderStoreTests {
    @Test("keeps the OrderStore contract", arguments: OrderStoreContract.checks)
    func contract(_ check: OrderStoreContractCheck) throws {
        let server = try RedisServer()
        defer { server.stop() }
        try check.run(.redis(port: server.port))
    }
}

@Suite("RedisOrderStore across nodes and failures", .ownThreads)
struct RedisOrderStoreNodeTests {
    /// Two stores (two nodes) on one Redis race through the same orders' lifecycles: every success is exactly one
    /// record, and each order's history is a legal chain (no lost update, no two moves from the same state).
    @Test("two nodes applying to the same orders never both succeed from one state")
    func racingNodes() throws {
        let server = try RedisServer()
        defer { server.stop() }
        let address = RedisAddress(host: "127.0.0.1", port: server.port)
        let orders = (0..<30).map { "race\($0)" }
        let successes = Mutex<[String: Int]>([:])
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 2) { node in
            do {
                let store = try RedisOrderStore(address: address, prefix: "race")
                defer { store.shutdown() }
                for step in 0..<8 {
                    let changes = orders.map { OrderFixtures.taxiLifecycle($0)[step] }
                    // Node 0 applies one by one, node 1 in pipelined batches: both paths race.
                    let results = node == 0 ? changes.map { change in Result { () throws(StoreError) in try store.apply(change) } }
                        : store.applyBatch(changes)
                    for (change, result) in zip(changes, results) {
                        switch result {
                        case .success(let applied) where !applied.deduplicated:
                            successes.withLock { $0[change.orderID.rawValue, default: 0] += 1 }
                        case .success: break
                        case .failure(let error):
                            if error.code != .illegalTransition && error.code != .unknownOrder {
                                failures.withLock { $0.append("\(error)") }
                            }
                        }
                    }
                }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 } == [])
        let reader = try RedisOrderStore(address: address, prefix: "race")
        defer { reader.shutdown() }
        for order in orders {
            let history = try #require(try OrderFixtures.history(reader, .taxi, order))
            #expect(history.map(\.position.offset) == Array(1...UInt64(history.count)))
            for (previous, next) in zip(history, history.dropFirst()) { #expect(next.fromState == previous.toState) }
            #expect(history.count == successes.withLock { $0[order] ?? 0 })
            #expect(history.last?.toState == BuiltInLines.paid)
        }
    }

    @Test("a flushed Redis is a new epoch: old positions are expired, new orders start at offset 1")
    func flushIsNewEpoch() throws {
        let server = try RedisServer()
        defer { server.stop() }
        let address = RedisAddress(host: "127.0.0.1", port: server.port)
        let store = try RedisOrderStore(address: address)
        defer { store.shutdown() }
        for change in OrderFixtures.taxiLifecycle("f1").prefix(3) { _ = try store.apply(change) }
        let old = StreamPosition(epoch: store.epoch, offset: 2)
        let admin = try RedisBlockingConnection(address)
        try admin.command(["FLUSHALL"])
        #expect(try store.records(of: .taxi, OrderFixtures.id("f1"), after: old, limit: 10) == .expired)
        #expect(store.epoch != old.epoch)
        #expect(try store.snapshot(of: .taxi, OrderFixtures.id("f1")) == nil)
        // The cached snapshot of f1 is gone with the epoch: a new lifecycle starts at 1 in the new epoch.
        let again = try store.apply(OrderFixtures.taxiLifecycle("f1")[0])
        #expect(again.record.position == StreamPosition(epoch: store.epoch, offset: 1))
        // A second node adopts the same new epoch.
        let other = try RedisOrderStore(address: address)
        defer { other.shutdown() }
        #expect(other.epoch == store.epoch)
    }

    @Test("an unreachable Redis fails calls with a retryable storage error, and the store reconnects after")
    func outage() throws {
        let server = try RedisServer()
        let port = server.port
        let address = RedisAddress(host: "127.0.0.1", port: port)
        let store = try RedisOrderStore(address: address, timeout: .seconds(1))
        defer { store.shutdown() }
        _ = try store.apply(OrderFixtures.change("o1", BuiltInLines.created))
        server.stop()
        let error = OrderFixtures.storeError { () throws(StoreError) in
            try store.apply(OrderFixtures.change("o1", BuiltInLines.dispatching))
        }
        guard case .storage(_, let retryable) = error else {
            Issue.record("expected a storage error, got \(String(describing: error))")
            return
        }
        #expect(retryable)
        #expect(error?.code == .unavailable)
        let batch = store.applyBatch([
            OrderFixtures.change("o2", BuiltInLines.created), OrderFixtures.change("o3", BuiltInLines.created),
        ])
        #expect(batch.allSatisfy { if case .failure(.storage(_, true)) = $0 { true } else { false } })
        // Redis back on the same port (empty: no persistence): the store reconnects, in a new epoch.
        let restarted = try RedisServer(port: port)
        defer { restarted.stop() }
        let epoch = store.epoch
        let applied = try store.apply(OrderFixtures.change("o2", BuiltInLines.created))
        #expect(applied.record.position.offset == 1 && store.epoch != epoch)
    }

    @Test("scripts flushed from Redis are sent again with EVAL")
    func noScript() throws {
        let server = try RedisServer()
        defer { server.stop() }
        let address = RedisAddress(host: "127.0.0.1", port: server.port)
        let store = try RedisOrderStore(address: address)
        defer { store.shutdown() }
        _ = try store.apply(OrderFixtures.change("s1", BuiltInLines.created))
        try RedisBlockingConnection(address).command(["SCRIPT", "FLUSH"])
        #expect(try store.apply(OrderFixtures.change("s1", BuiltInLines.dispatching)).record.position.offset == 2)
        try RedisBlockingConnection(address).command(["SCRIPT", "FLUSH"])
        let batch = store.applyBatch([
            OrderFixtures.change("s2", BuiltInLines.created), OrderFixtures.change("s1", BuiltInLines.cancelled,
            fields: OrderFields(cancellationReason: "r")),
        ])
        #expect(batch.map { try? $0.get().record.position.offset } == [1, 3])
    }

    @Test("a pub/sub message round-trips every field of a record")
    func messageCodec() throws {
        let record = OrderChangeRecord(
            orderID: OrderFixtures.id("m-1"),
            line: .carpool,
            fromState: BuiltInLines.driverAssigned,
            toState: BuiltInLines.driverArriving,
            fields: OrderFields(
                driverID: "d9",
                etaSeconds: 70,
                location: GeoPoint(latitudeE6: -33_868_820, longitudeE6: 151_209_290),
                cancellationReason: "none",
                payload: [0, 255, 13, 10]
            ),
            position: StreamPosition(epoch: 4_000_000_000, offset: 1 << 40),
            timestampMillis: 1_700_000_000_123
        )
        let message = RedisRecordCodec.message(record)
        #expect(message.withUnsafeBytes { RedisRecordCodec.record(message: $0) } == record)
        var first = record
        first.fromState = nil
        first.fields = .none
        let short = RedisRecordCodec.message(first)
        #expect(short.withUnsafeBytes { RedisRecordCodec.record(message: $0) } == first)
        #expect(message.dropLast().withUnsafeBytes { RedisRecordCodec.record(message: $0) } == nil)
    }
}

@Suite("Redis AUTH", .ownThreads)
struct RedisAuthTests {
    /// Records deliveries for the broker test.
    final class Deliveries: BrokerDelivery {
        let records = Mutex<[OrderChangeRecord]>([])
        func brokerDidDeliver(_ record: OrderChangeRecord) { records.withLock { $0.append(record) } }
    }

    @Test("store and broker authenticate with the password; a store without it is refused")
    func password() throws {
        let server = try RedisServer()
        defer { server.stop() }
        let address = RedisAddress(host: "127.0.0.1", port: server.port)
        try RedisBlockingConnection(address).command(["CONFIG", "SET", "requirepass", "s3cret"])
        #expect(throws: StoreError.self) { try RedisOrderStore(address: address) }
        let store = try RedisOrderStore(address: address, password: "s3cret")
        defer { store.shutdown() }
        let broker = try RedisBroker(configuration: RedisBroker.Configuration(address: address, password: "s3cret"))
        defer { broker.shutdown() }
        let deliveries = Deliveries()
        try broker.start(delivering: deliveries)
        let deadline = ContinuousClock.now + .seconds(10)
        while !broker.isConnected && ContinuousClock.now < deadline { usleep(10_000) }
        #expect(broker.isConnected)
        let route = Route.order(.taxi, OrderFixtures.id("p1"))
        try broker.subscribe([route])
        let subscribed = Atomic<Bool>(false)
        broker.whenSubscribed([route]) { subscribed.store(true, ordering: .releasing) }
        while !subscribed.load(ordering: .acquiring) && ContinuousClock.now < deadline { usleep(10_000) }
        let confirmed = subscribed.load(ordering: .acquiring)
        #expect(confirmed)
        let applied = try store.apply(OrderFixtures.change("p1", BuiltInLines.created))
        while deliveries.records.withLock({ $0.isEmpty }) && ContinuousClock.now < deadline { usleep(10_000) }
        #expect(deliveries.records.withLock { $0 } == [applied.record].map { record in
            var pushed = record
            pushed.idempotencyKey = ""
            return pushed
        })
    }
}
