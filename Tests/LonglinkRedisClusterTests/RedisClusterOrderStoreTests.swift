import Foundation
import LonglinkCore
import LonglinkRedis
import LonglinkTestSupport
import Synchronization
import Testing

extension OrderStoreFactory {
    /// `RedisOrderStore`s on a Redis Cluster, each under a fresh key prefix (so a make is empty).
    static func redisCluster(_ cluster: RedisCluster, durability: RedisDurability = .master) -> OrderStoreFactory {
        let address = RedisClusterAddress(url: cluster.url)!
        let run = UUID().uuidString.prefix(8)
        let counter = Atomic<Int>(0)
        return OrderStoreFactory(
            name: durability.waits ? "redis-cluster+wait" : "redis-cluster",
            make: { setup in
                try RedisOrderStore(
                    cluster: address,
                    prefix: "c\(run)-\(counter.add(1, ordering: .relaxed).newValue)",
                    durability: durability,
                    catalog: setup.catalog,
                    retention: setup.retention,
                    clock: setup.clock
                )
            },
            reopen: { setup, old in
                guard let old = old as? RedisOrderStore else { throw NotRedisStore() }
                return try RedisOrderStore(
                    cluster: address,
                    prefix: old.prefix,
                    durability: durability,
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

@Suite("RedisOrderStore on a real Redis Cluster", .ownThreads)
struct RedisClusterOrderStoreTests {
    @Test("keeps the OrderStore contract", arguments: OrderStoreContract.checks)
    func contract(_ check: OrderStoreContractCheck) throws {
        try check.run(.redisCluster(try RedisCluster.shared()))
    }

    @Test("keeps the OrderStore contract with WAIT for a replica", arguments: OrderStoreContract.checks)
    func contractWithWait(_ check: OrderStoreContractCheck) throws {
        try check.run(.redisCluster(try RedisCluster.shared(), durability: RedisDurability(replicas: 1, timeout: .seconds(2))))
    }

    @Test("an order's keys share one slot on one master; the slot's indexes and epoch are beside them")
    func layout() throws {
        let cluster = try RedisCluster.shared()
        let prefix = "layout-\(UUID().uuidString.prefix(8))"
        let store = try RedisOrderStore(cluster: RedisClusterAddress(url: cluster.url)!, prefix: prefix)
        defer { store.shutdown() }
        let ids = (0..<40).map { "L\($0)" }
        for id in ids { _ = try store.apply(OrderFixtures.change(id, BuiltInLines.created)) }
        var masters = Set<Int>()
        for id in ids {
            let tag = "taxi/\(id)"
            let slot = try cluster.keySlot("{\(tag)}")
            let master = try cluster.master(ofSlot: slot)
            masters.insert(master)
            let node = try cluster.client(master)
            let slotTag = RedisClusterSlot.tag(for: slot)
            for key in ["\(prefix):o:{\(tag)}", "\(prefix):h:{\(tag)}", "\(prefix):epoch:{\(slotTag)}"] {
                #expect(try cluster.keySlot(key) == slot, "\(key)")
                #expect(try node.command(["EXISTS", key]) == .integer(1), "\(key) on \(master)")
            }
            #expect(try node.command(["ZSCORE", "\(prefix):orders:{\(slotTag)}", "taxi\u{0}\(id)"]) == .bulk("0"))
        }
        #expect(masters.count == 3)  // 40 orders land on every shard
        // No one-server key exists: no global epoch or sorted set.
        for global in ["\(prefix):epoch", "\(prefix):orders", "\(prefix):terminal"] {
            let master = try cluster.master(ofSlot: try cluster.keySlot(global))
            #expect(try cluster.client(master).command(["EXISTS", global]) == .integer(0))
        }
    }

    @Test("two stores applying to the same orders never both succeed from one state, batched or not")
    func racingStores() throws {
        let cluster = try RedisCluster.shared()
        let address = RedisClusterAddress(url: cluster.url)!
        let prefix = "race-\(UUID().uuidString.prefix(8))"
        let orders = (0..<24).map { "race\($0)" }
        let successes = Mutex<[String: Int]>([:])
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 2) { node in
            do {
                let store = try RedisOrderStore(cluster: address, prefix: prefix)
                defer { store.shutdown() }
                for step in 0..<8 {
                    let changes = orders.map { OrderFixtures.taxiLifecycle($0)[step] }
                    let results = node == 0 ? changes.map { change in Result { () throws(StoreError) in try store.apply(change) } }
                        : store.applyBatch(changes)
                    for (change, result) in zip(changes, results) {
                        switch result {
                        case .success(let applied) where !applied.deduplicated:
                            successes.withLock { $0[change.orderID.rawValue, default: 0] += 1 }
                        case .success: break
                        case .failure(let error):
                            if error.code != .illegalTransition && error.code != .unknownOrder { failures.withLock { $0.append("\(error)") } }
                        }
                    }
                }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 } == [])
        let reader = try RedisOrderStore(cluster: address, prefix: prefix)
        defer { reader.shutdown() }
        for order in orders {
            let history = try #require(try OrderFixtures.history(reader, .taxi, order))
            #expect(history.map(\.position.offset) == Array(1...UInt64(history.count)))
            for (previous, next) in zip(history, history.dropFirst()) { #expect(next.fromState == previous.toState) }
            #expect(history.count == successes.withLock { $0[order] ?? 0 })
            #expect(history.last?.toState == BuiltInLines.paid)
        }
    }
}
