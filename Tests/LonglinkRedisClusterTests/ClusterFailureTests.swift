import Foundation
import LonglinkCommands
import LonglinkCore
import LonglinkGateway
import LonglinkRedis
import LonglinkStores
import LonglinkTestSupport
import Synchronization
import Testing

/// Failures of a Redis Cluster under two gateway nodes: each test starts its own cluster (3 masters, 3 replicas,
/// `cluster-node-timeout` 1 s) and kills or moves parts of it.
@Suite("Gateway nodes through Redis Cluster failures", .serialized)
struct ClusterFailureTests {
    @Test("with WAIT a change the frozen replica does not confirm fails retryably and is not published; its retry is, once the replica is back")
    func waitNeedsTheReplica() throws {
        let cluster = try RedisCluster(nodeTimeoutMillis: 2_000)
        defer { cluster.stop() }
        let address = RedisClusterAddress(url: cluster.url)!
        let prefix = "wait"
        let store = try RedisOrderStore(cluster: address, prefix: prefix, durability: RedisDurability(replicas: 1, timeout: .milliseconds(300)))
        defer { store.shutdown() }
        let eager = try RedisOrderStore(cluster: address, prefix: prefix)  // acknowledges on the master
        defer { eager.shutdown() }
        let broker = try RedisClusterBroker(configuration: .init(address: address, prefix: prefix))
        let received = BrokerContract.Received()
        try broker.start(delivering: received)
        defer { broker.shutdown() }
        let shard = try cluster.shards()[0]
        let inShard = { (slot: Int) in shard.slots.contains { $0.contains(slot) } }
        let (id, other) = (orderID("w", where: inShard), orderID("e", where: inShard))
        let route = Route.order(.taxi, OrderID(id)!)
        #expect(eventuallyTrue { broker.isConnected })
        try broker.subscribe([route])
        #expect(BrokerContract.subscribed(broker, [route]))
        _ = try store.apply(OrderFixtures.change(id, BuiltInLines.created, key: "w-1"))
        #expect(eventuallyTrue { received.records(of: route).count == 1 })
        let dispatch = OrderFixtures.change(id, BuiltInLines.dispatching, key: "w-2")
        cluster.pause(try #require(shard.replicas.first))
        let refused = OrderFixtures.storeError { () throws(StoreError) in try store.apply(dispatch) }
        guard case .storage(let why, retryable: true)? = refused else {
            Issue.record("expected a retryable failure, got \(String(describing: refused))")
            cluster.resume(shard.replicas[0])
            return
        }
        #expect(why.contains("not confirmed"))
        // Without WAIT the same shard acknowledges at once: a failover now would lose that change.
        let eagerly = OrderFixtures.storeError { () throws(StoreError) in try eager.apply(OrderFixtures.change(other, BuiltInLines.created)) }
        #expect(eagerly == nil)
        usleep(300_000)
        #expect(received.records(of: route).count == 1)  // the unconfirmed record was not published
        cluster.resume(shard.replicas[0])
        let retried = try store.apply(dispatch)
        #expect(retried.deduplicated && retried.record.position.offset == 2)
        #expect(eventuallyTrue { received.records(of: route).map(\.position.offset) == [1, 2] })
        #expect(try store.apply(OrderFixtures.change(id, BuiltInLines.driverAssigned, fields: OrderFields(driverID: "d", etaSeconds: 60))).record.position.offset == 3)
    }

    @Test("kill -9 of a master under durable publishing: the replica takes over, nothing acknowledged is lost or doubled, every subscriber gets every record")
    func masterFailover() throws {
        let cluster = try RedisCluster(nodeTimeoutMillis: 1_000)
        defer { cluster.stop() }
        let prefix = "failover"
        let durability = RedisDurability(replicas: 1, timeout: .seconds(1))
        let logs = [CollectingLogSink(), CollectingLogSink()]
        let nodes = try zip(["a", "b"], logs).map { try startClusterNode($0, cluster: cluster, prefix: prefix, durability: durability, log: $1) }
        defer { nodes.forEach { $0.drainAndStop() } }
        let shards = try cluster.shards()
        let victim = shards[1]
        // Two orders on the shard that loses its master, one on each other shard.
        let ids = [
            orderID("v1") { slot in victim.slots.contains { $0.contains(slot) } },
            orderID("v2") { slot in victim.slots.contains { $0.contains(slot) } },
            orderID("s0") { slot in shards[0].slots.contains { $0.contains(slot) } },
            orderID("s2") { slot in shards[2].slots.contains { $0.contains(slot) } },
        ]
        let ports = nodes.map(\.gateway.port)
        let followers = ids.map { RouteFollower(.order(.taxi, OrderID($0)!), ports: ports) }
        for follower in followers { try follower.connect() }
        let count = 160
        let publishers = ids.map { RetryingPublisher(clusterTaxiChanges($0, count: count), pause: .milliseconds(10), writer: nodes[1].writer) }
        // Steady state first: every order has records flowing to node A's subscribers.
        for follower in followers { #expect(try follower.pump(timeout: .seconds(30)) { follower.offsets.count >= 25 }) }
        // The victim's replica stalls first, so the master holds changes the replica never gets; then the master
        // dies and the stalled replica, missing them, is promoted. Only changes WAIT confirmed may have been
        // acknowledged, so none of the missing ones was.
        let replica = try #require(victim.replicas.first)
        cluster.pause(replica)
        usleep(400_000)
        cluster.kill9(victim.master)
        cluster.resume(replica)
        #expect(eventuallyTrue(timeout: .seconds(20)) { publishers[0].retryableFailures.load(ordering: .relaxed) > 0 })
        // The replica takes over the victim's slots.
        #expect(eventuallyTrue(timeout: .seconds(30)) { (try? cluster.shards().first { $0.slots == victim.slots }?.master) == replica })
        // With one replica per master, WAIT 1 cannot succeed on the promoted master until a replica is back: the
        // killed node is restarted (empty) and rejoins as the new master's replica. Until then writes to that shard
        // fail retryably and the publisher keeps retrying with the same idempotency keys.
        try cluster.restart(victim.master)
        try cluster.waitUntilHealthy(timeout: .seconds(60))
        for publisher in publishers { #expect(publisher.waitUntilFinished()) }
        for publisher in publishers {
            #expect(publisher.errors.withLock { Array($0.prefix(3)) } == [])
            #expect(publisher.accepted.load(ordering: .relaxed) == count)
        }
        for (id, follower) in zip(ids, followers) {
            #expect(try follower.pump(timeout: .seconds(30)) { follower.offsets.count >= count }, "\(id)")
            let missing = difference(follower.offsets, Array(1...UInt64(count)))
            #expect(missing == nil, "\(id): offsets received; \(follower.connections) connections, recoveries \(follower.recoveries)")
            if missing != nil {
                let unpublished = try? nodes[1].writer.readAndWait { store in (store as? RedisOrderStore)?.unpublishedRecords ?? -1 }
                print("FAILOVER-DIAG \(id) slot \(RedisClusterSlot.of("taxi/\(id)")) victim \(victim.master) replica \(replica) unpublished \(unpublished ?? -2)\nFOLLOWER\n\(follower.journal.joined(separator: "\n"))\nNODE A\n\(logs[0].text)\nNODE B\n\(logs[1].text)")
            }
            #expect(follower.recoveries.allSatisfy { $0 }, "\(id)")
            // Every acknowledged change is stored exactly once: one record per idempotency key, offsets 1…count.
            let history = try storedHistory(cluster, prefix: prefix, id)
            #expect(difference(history.map(\.position.offset), Array(1...UInt64(count))) == nil, "\(id): stored offsets")
            #expect(difference(history.map(\.idempotencyKey), clusterTaxiChanges(id, count: count).map(\.idempotencyKey)) == nil, "\(id): keys")
        }
        // The subscribers of the victim's orders were told to resume (at least one reconnect each).
        #expect(followers[0].connections >= 2 && followers[1].connections >= 2)
    }
}

/// Nil when equal; otherwise the counts and the first index where they differ (short, unlike the arrays).
func difference<T: Equatable>(_ actual: [T], _ expected: [T]) -> String? {
    guard actual != expected else { return nil }
    let index = zip(actual, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(actual.count, expected.count)
    let got = index < actual.count ? "\(actual[index])" : "nothing"
    let wanted = index < expected.count ? "\(expected[index])" : "nothing"
    return "\(actual.count) items, expected \(expected.count); at \(index): \(got) instead of \(wanted)"
}
