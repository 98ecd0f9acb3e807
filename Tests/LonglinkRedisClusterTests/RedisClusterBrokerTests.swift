import Foundation
import LonglinkCore
import LonglinkRedis
import LonglinkTestSupport
import Testing

extension BrokerContractFactory {
    /// `RedisClusterBroker` nodes on a cluster, under a key prefix of their own (so that a shared cluster's other
    /// tests do not reach their line-wide subscriptions); `dropConnections` kills the subscribed connections on every
    /// node with `CLIENT KILL TYPE pubsub` (only on a cluster of the test's own: it cuts every broker's).
    static func redisCluster(_ cluster: RedisCluster, seeds: String? = nil) -> BrokerContractFactory {
        let address = RedisClusterAddress(url: seeds ?? cluster.url)!
        let prefix = "contract-\(UUID().uuidString.prefix(8))"
        let node: @Sendable () throws -> any Broker = {
            try RedisClusterBroker(configuration: .init(address: address, prefix: prefix))
        }
        let ports = cluster.ports
        return BrokerContractFactory(
            name: "redis-cluster",
            networked: true,
            node: node,
            dropConnections: {
                for port in ports { _ = try RESPTestClient(port: port).command(["CLIENT", "KILL", "TYPE", "pubsub"]) }
            },
            make: { (try node(), try node()) }
        )
    }
}

@Suite("RedisClusterBroker on a real Redis Cluster", .ownThreads)
struct RedisClusterBrokerTests {
    @Test("keeps the Broker contract", arguments: BrokerContract.checks)
    func contract(_ check: BrokerContractCheck) throws {
        try check.run(.redisCluster(try RedisCluster.shared(), seeds: try RedisCluster.shared().singleSeedURL))
    }

    @Test("keeps the networked Broker contract, on a cluster of its own", arguments: BrokerContract.networkedChecks)
    func networkedContract(_ check: BrokerContractCheck) throws {
        let cluster = try RedisCluster(replicasPerMaster: 0)
        defer { cluster.stop() }
        try check.run(.redisCluster(cluster))
    }

    @Test("records go out with SPUBLISH on the slot's shard and reach only the shard's subscribers")
    func shardedDelivery() throws {
        let cluster = try RedisCluster.shared()
        let address = RedisClusterAddress(url: cluster.url)!
        let subscriber = try RedisClusterBroker(configuration: .init(address: address, prefix: "sharded"))
        let received = BrokerContract.Received()
        try subscriber.start(delivering: received)
        defer { subscriber.shutdown() }
        let store = try RedisOrderStore(cluster: address, prefix: "sharded")
        defer { store.shutdown() }
        #expect(eventually { subscriber.isConnected })
        let ids = (0..<12).map { "s\($0)-\(UUID().uuidString.prefix(6))" }
        let routes = ids.map { Route.order(.taxi, OrderID($0)!) }
        try subscriber.subscribe(routes)
        #expect(BrokerContract.subscribed(subscriber, routes))
        for id in ids { _ = try store.apply(OrderFixtures.change(id, BuiltInLines.created)) }
        #expect(eventually { routes.allSatisfy { received.records(of: $0).count == 1 } })
        // Each record went to the master of its order's slot with SPUBLISH (none with the broadcast PUBLISH), and
        // the subscriber holds each channel on that master only.
        for (id, route) in zip(ids, routes) {
            let slot = try cluster.keySlot("{taxi/\(id)}")
            let owner = try cluster.master(ofSlot: slot)
            let channel = "sharded:r:{taxi/\(id)}"
            #expect(try cluster.client(owner).command(["PUBSUB", "SHARDNUMSUB", channel]).array?.last == .integer(1), "\(route)")
        }
        for shard in try cluster.shards() {
            let stats = try cluster.client(shard.master).text(["INFO", "commandstats"])
            #expect(!stats.contains("cmdstat_publish:"), "PUBLISH on \(shard.master)")
        }
        #expect(subscriber.activeChannelCount == routes.count)
    }
}
