import Foundation
import LonglinkTestSupport
import Testing

/// The test cluster itself: created healthy, its topology readable, a killed master failed over and rejoining.
@Suite("RedisCluster test support", .ownThreads)
struct RedisClusterSupportTests {
    @Test("the shared cluster has 3 masters with a replica each, covering every slot")
    func sharedTopology() throws {
        let cluster = try RedisCluster.shared()
        let shards = try cluster.shards()
        #expect(shards.count == 3)
        #expect(shards.allSatisfy { $0.replicas.count == 1 })
        #expect(shards.reduce(0) { $0 + $1.slots.reduce(0) { $0 + $1.count } } == 16_384)
        #expect(Set(cluster.ports).count == 6)
        #expect(try cluster.master(ofSlot: 0) == shards[0].master)
        #expect(try cluster.keySlot("foo") == 12_182)
    }
}
