import Foundation
import LonglinkCore
import LonglinkRedis
import LonglinkTestSupport
import Testing

extension BrokerContractFactory {
    /// Two `RedisClusterBroker`s on a cluster.
    static func redisCluster(_ cluster: RedisCluster, seeds: String? = nil) -> BrokerContractFactory {
        let address = RedisClusterAddress(url: seeds ?? cluster.url)!
        return BrokerContractFactory(name: "redis-cluster", networked: true) {
            (
                try RedisClusterBroker(configuration: .init(address: address)),
                try RedisClusterBroker(configuration: .init(address: address))
            )
        }
    }
}

@Suite("RedisClusterBroker on a real Redis Cluster")
struct RedisClusterBrokerTests {
    @Test("keeps the Broker contract", arguments: BrokerContract.checks)
    func contract(_ check: BrokerContractCheck) throws {
        try check.run(.redisCluster(try RedisCluster.shared(), seeds: try RedisCluster.shared().singleSeedURL))
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
        #expect(eventuallyTrue { subscriber.isConnected })
        let ids = (0..<12).map { "s\($0)-\(UUID().uuidString.prefix(6))" }
        let routes = ids.map { Route.order(.taxi, OrderID($0)!) }
        try subscriber.subscribe(routes)
        #expect(BrokerContract.subscribed(subscriber, routes))
        for id in ids { _ = try store.apply(OrderFixtures.change(id, BuiltInLines.created)) }
        #expect(eventuallyTrue { routes.allSatisfy { received.records(of: $0).count == 1 } })
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

/// Polls until `condition` holds (10 s at most).
func eventuallyTrue(timeout: Duration = .seconds(10), _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        usleep(5_000)
    }
    return condition()
}
