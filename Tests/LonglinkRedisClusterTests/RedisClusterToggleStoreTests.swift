import Foundation
import LonglinkCore
import LonglinkRedis
import LonglinkTestSupport
import Synchronization
import Testing

extension ToggleStoreFactory {
    /// `RedisToggleStore`s on a Redis Cluster, each under a fresh key prefix; `reopen` is another connection to
    /// the cluster under the same prefix (another node).
    static func redisCluster(_ cluster: RedisCluster, durability: RedisDurability = .master) -> ToggleStoreFactory {
        let address = RedisClusterAddress(url: cluster.url)!
        let run = UUID().uuidString.prefix(8)
        let counter = Atomic<Int>(0)
        return ToggleStoreFactory(
            name: durability.waits ? "redis-cluster+wait" : "redis-cluster",
            make: {
                try RedisToggleStore(cluster: address, prefix: "ct\(run)-\(counter.add(1, ordering: .relaxed).newValue)", durability: durability)
            },
            reopen: { old in
                guard let old = old as? RedisToggleStore else { throw NotRedisStore() }
                return try RedisToggleStore(cluster: address, prefix: old.prefix, durability: durability)
            }
        )
    }
}

@Suite("RedisToggleStore on a real Redis Cluster", .ownThreads)
struct RedisClusterToggleStoreTests {
    @Test("keeps the ToggleStore contract", arguments: ToggleStoreContract.checks)
    func contract(_ check: ToggleStoreContractCheck) throws {
        try check.run(.redisCluster(try RedisCluster.shared()))
    }

    @Test("keeps the ToggleStore contract with WAIT for a replica", arguments: ToggleStoreContract.checks)
    func contractWithWait(_ check: ToggleStoreContractCheck) throws {
        try check.run(.redisCluster(try RedisCluster.shared(), durability: RedisDurability(replicas: 1, timeout: .seconds(2))))
    }

    @Test("every toggle is in one slot, beside that slot's epoch")
    func layout() throws {
        let cluster = try RedisCluster.shared()
        let prefix = "ctl-\(UUID().uuidString.prefix(8))"
        let store = try RedisToggleStore(cluster: RedisClusterAddress(url: cluster.url)!, prefix: prefix)
        defer { store.shutdown() }
        for name in ["a", "b", "c"] { _ = try store.setToggle(app: "rider", name: name, value: .bool(true), nowMillis: 1) }
        let hash = "\(prefix):toggles:{config}"
        let slot = try cluster.keySlot(hash)
        let node = try cluster.client(try cluster.master(ofSlot: slot))
        #expect(try node.command(["HLEN", hash]) == .integer(3))
        let epochKey = "\(prefix):epoch:{\(RedisClusterSlot.tag(for: slot))}"
        #expect(try cluster.keySlot(epochKey) == slot)
        #expect(try node.command(["GET", epochKey]) == .bulk(String(store.epoch)))
    }
}
