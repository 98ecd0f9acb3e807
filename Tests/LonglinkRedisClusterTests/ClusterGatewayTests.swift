import Foundation
import LonglinkServer
import LonglinkCore
import LonglinkGateway
import LonglinkRedis
import LonglinkStores
import LonglinkTestSupport
import Synchronization
import Testing

/// Gateway nodes on the shared Redis Cluster, nothing disrupted.
@Suite("Gateway nodes on a Redis Cluster", .ownThreads)
struct ClusterGatewayTests {
    @Test("a record published on node B reaches subscribers on node A once, in order, for orders on every shard")
    func crossNode() throws {
        let cluster = try RedisCluster.shared()
        let prefix = "xnode-\(UUID().uuidString.prefix(8))"
        let nodes = try ["a", "b"].map { try startClusterNode($0, cluster: cluster, prefix: prefix) }
        defer { nodes.forEach { $0.drainAndStop() } }
        let shards = try cluster.shards()
        // One order per shard.
        let ids = shards.map { shard in orderID("x\(shard.master)") { slot in shard.slots.contains { $0.contains(slot) } } }
        let followers = ids.map { RouteFollower(.order(.taxi, OrderID($0)!), ports: [nodes[0].gateway.port]) }
        for follower in followers { try follower.connect() }
        let count = 30
        for index in 0..<count {
            for id in ids {
                let change = keyedTaxiChanges(id, count: count)[index]
                guard case .success = applyAndWait(nodes[1].writer, change, timeout: .seconds(20)) else {
                    Issue.record("publish of \(change.idempotencyKey) on node B failed")
                    return
                }
            }
        }
        for follower in followers {
            #expect(try follower.pump(timeout: .seconds(20)) { follower.offsets.count >= count })
            #expect(difference(follower.offsets, Array(1...UInt64(count))) == nil)
        }
        let broker = try #require(nodes[0].broker as? RedisClusterBroker)
        #expect(broker.isConnected && broker.activeChannelCount == ids.count)
    }
}
