import Foundation
import LonglinkServer
import LonglinkCore
import LonglinkGateway
import LonglinkRedis
import LonglinkStores
import LonglinkTestSupport
import Synchronization
import Testing

/// Failures of a Redis Cluster under two gateway nodes: each test starts its own cluster (3 masters, 3 replicas,
/// `cluster-node-timeout` 1 s) and kills or moves parts of it.
@Suite("Gateway nodes through Redis Cluster failures", .serialized, .ownThreads)
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
        #expect(eventually { broker.isConnected })
        try broker.subscribe([route])
        #expect(BrokerContract.subscribed(broker, [route]))
        _ = try applyRetrying(store, OrderFixtures.change(id, BuiltInLines.created, key: "w-1"))
        #expect(eventually { received.records(of: route).count == 1 })
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
        let retried = try applyRetrying(store, dispatch)  // a busy machine may need a moment after the thaw
        #expect(retried.deduplicated && retried.record.position.offset == 2)
        #expect(eventually { received.records(of: route).map(\.position.offset) == [1, 2] })
        #expect(try applyRetrying(store, OrderFixtures.change(id, BuiltInLines.driverAssigned, fields: OrderFields(driverID: "d", etaSeconds: 60), key: "w-3")).record.position.offset == 3)
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
        let publishers = ids.map { RetryingPublisher(keyedTaxiChanges($0, count: count), pause: .milliseconds(10), writer: nodes[1].writer) }
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
        #expect(eventually(timeout: .seconds(20)) { publishers[0].retryableFailures.load(ordering: .relaxed) > 0 })
        // The replica takes over the victim's slots.
        #expect(eventually(timeout: .seconds(30)) { (try? cluster.shards().first { $0.slots == victim.slots }?.master) == replica })
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
            #expect(difference(history.map(\.idempotencyKey), keyedTaxiChanges(id, count: count).map(\.idempotencyKey)) == nil, "\(id): keys")
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

/// Moving slots and losing a shard, under gateway nodes.
@Suite("Gateway nodes through Redis Cluster slot moves and data loss", .serialized, .ownThreads)
struct ClusterTopologyTests {
    @Test("redis-cli --cluster reshard under load: the moved orders keep their history, nothing is lost or doubled, subscribers follow")
    func reshardUnderLoad() throws {
        let cluster = try RedisCluster(nodeTimeoutMillis: 2_000)
        defer { cluster.stop() }
        let prefix = "reshard"
        let logs = [CollectingLogSink(), CollectingLogSink()]
        let nodes = try zip(["a", "b"], logs).map { try startClusterNode($0, cluster: cluster, prefix: prefix, log: $1) }
        defer { nodes.forEach { $0.drainAndStop() } }
        let shards = try cluster.shards()
        let (source, target) = (shards[0], shards[1])
        // redis-cli moves the source's lowest slots: 64 of them hold three of the orders, the fourth stays.
        let moving = (source.slots[0].lowerBound)..<(source.slots[0].lowerBound + 64)
        let ids = [
            orderID("m1") { moving.contains($0) }, orderID("m2") { moving.contains($0) }, orderID("m3") { moving.contains($0) },
            orderID("k1") { slot in source.slots.contains { $0.contains(slot) } && !moving.contains(slot) },
        ]
        let ports = nodes.map(\.gateway.port)
        let followers = ids.map { RouteFollower(.order(.taxi, OrderID($0)!), ports: ports) }
        for follower in followers { try follower.connect() }
        let count = 150
        let publishers = ids.map { RetryingPublisher(keyedTaxiChanges($0, count: count), pause: .milliseconds(10), writer: nodes[1].writer) }
        for follower in followers { #expect(try follower.pump(timeout: .seconds(30)) { follower.offsets.count >= 20 }) }
        let reshard = try cluster.redisCLI([
            "--cluster", "reshard", "127.0.0.1:\(source.master)", "--cluster-from", source.masterID, "--cluster-to", target.masterID,
            "--cluster-slots", String(moving.count), "--cluster-yes", "--cluster-pipeline", "2",
        ])
        #expect(reshard.status == 0, "\(reshard.text.suffix(400))")
        for id in ids.prefix(3) { #expect(try cluster.master(ofSlot: RedisClusterSlot.of("taxi/\(id)")) == target.master, "\(id) moved") }
        for publisher in publishers { #expect(publisher.waitUntilFinished()) }
        for publisher in publishers {
            #expect(publisher.errors.withLock { Array($0.prefix(3)) } == [])
            #expect(publisher.accepted.load(ordering: .relaxed) == count)
        }
        for (id, follower) in zip(ids, followers) {
            #expect(try follower.pump(timeout: .seconds(30)) { follower.offsets.count >= count }, "\(id)")
            let missing = difference(follower.offsets, Array(1...UInt64(count)))
            #expect(missing == nil, "\(id): offsets received; \(follower.connections) connections, recoveries \(follower.recoveries)")
            #expect(follower.recoveries.allSatisfy { $0 }, "\(id)")
            if missing != nil { print("RESHARD-DIAG \(id)\n\(follower.journal.joined(separator: "\n"))\nNODE A\n\(logs[0].text)\nNODE B\n\(logs[1].text)") }
            let history = try storedHistory(cluster, prefix: prefix, id)
            #expect(difference(history.map(\.position.offset), Array(1...UInt64(count))) == nil, "\(id): stored offsets")
            #expect(difference(history.map(\.idempotencyKey), keyedTaxiChanges(id, count: count).map(\.idempotencyKey)) == nil, "\(id): keys")
            // The history kept its epoch: the slot's epoch key moved with it.
            #expect(Set(history.map(\.position.epoch)).count == 1, "\(id)")
        }
        let brokerA = try #require(nodes[0].broker as? RedisClusterBroker)
        #expect(brokerA.resubscribeCount >= 3)  // each moved order's channel followed its slot
    }

    @Test("a shard that loses its data (master and replica killed, restarted empty) gives its orders a new epoch: resuming subscribers get recovered = false; other shards keep theirs")
    func shardLosesData() throws {
        let cluster = try RedisCluster(nodeTimeoutMillis: 1_000, fullCoverage: false)
        defer { cluster.stop() }
        let prefix = "loss"
        let node = try startClusterNode("a", cluster: cluster, prefix: prefix)
        defer { node.drainAndStop() }
        let shards = try cluster.shards()
        let (lost, kept) = (shards[2], shards[0])
        let gone = orderID("g") { slot in lost.slots.contains { $0.contains(slot) } }
        let stays = orderID("s") { slot in kept.slots.contains { $0.contains(slot) } }
        let port = node.gateway.port
        let followers = [gone, stays].map { RouteFollower(.order(.taxi, OrderID($0)!), ports: [port]) }
        for follower in followers { try follower.connect() }
        for id in [gone, stays] {
            for change in keyedTaxiChanges(id, count: 5) { _ = try applyAndWait(node.writer, change, timeout: .seconds(20)).get() }
        }
        for follower in followers { #expect(try follower.pump(timeout: .seconds(20)) { follower.offsets.count >= 5 }) }
        let before = try #require(followers[0].position)
        let keptBefore = try #require(followers[1].position)
        cluster.kill9(lost.master)
        for replica in lost.replicas { cluster.kill9(replica) }
        usleep(500_000)
        try cluster.restart(lost.master)
        for replica in lost.replicas { try cluster.restart(replica) }
        try cluster.waitUntilHealthy(timeout: .seconds(60))
        // The node's broker lost the shard and subscribed again: the subscriber of the lost order resumes.
        #expect(try followers[0].pump(timeout: .seconds(30)) { followers[0].connections >= 2 })
        #expect(followers[0].recoveries == [false])
        #expect(followers[0].epochs.last != before.epoch)
        // A new subscriber resuming from the old position is told too; the order starts again at offset 1.
        let client = try FramePeer(port: port)
        try client.handshake()
        let resumed = try #require(try client.subscribe(.order(.taxi, OrderID(gone)!), since: before))
        #expect(!resumed.recovered && resumed.snapshot == nil && resumed.position.epoch != before.epoch)
        let again = try applyAndWait(node.writer, keyedTaxiChanges(gone, count: 1)[0], timeout: .seconds(20)).get()
        #expect(again.record.position.offset == 1 && again.record.position.epoch == resumed.position.epoch)
        // The other shard kept its data and epoch.
        let other = try FramePeer(port: port)
        try other.handshake()
        let keptResume = try #require(try other.subscribe(.order(.taxi, OrderID(stays)!), since: keptBefore))
        #expect(keptResume.recovered && keptResume.position == keptBefore)
    }
}

/// `apply`, retried (with the same change) while it fails retryably, for at most 10 s: what a publisher does.
func applyRetrying(_ store: RedisOrderStore, _ change: OrderChange) throws(StoreError) -> AppliedChange {
    let deadline = ContinuousClock.now + .seconds(10)
    while true {
        do {
            return try store.apply(change)
        } catch .storage(_, true) where ContinuousClock.now < deadline {
            usleep(50_000)
        }
    }
}

/// Redirections during a hand-made slot migration (CLUSTER SETSLOT … MIGRATING/IMPORTING, MIGRATE, SETSLOT NODE).
@Suite("RedisClusterClient during a slot migration", .ownThreads)
struct ClusterMigrationRedirectTests {
    @Test("a key already migrated is fetched behind ASKING without changing the map; once the slot is handed over, MOVED updates it")
    func askThenMoved() throws {
        let cluster = try RedisCluster(nodeTimeoutMillis: 2_000)
        defer { cluster.stop() }
        let client = try RedisClusterClient(RedisClusterAddress(url: cluster.url)!)
        let key = "ask-\(UUID().uuidString.prefix(8))"
        let slot = RedisClusterSlot.of(key)
        let shards = try cluster.shards()
        let source = try #require(shards.first { shard in shard.slots.contains { $0.contains(slot) } })
        let target = try #require(shards.first { $0.master != source.master })
        _ = try client.execute(.init(slot: slot, commands: [command("SET", key, "v")], replayable: false)).get()
        let (from, to) = (try cluster.client(source.master), try cluster.client(target.master))
        _ = try to.text(["CLUSTER", "SETSLOT", String(slot), "IMPORTING", source.masterID])
        _ = try from.text(["CLUSTER", "SETSLOT", String(slot), "MIGRATING", target.masterID])
        _ = try from.text(["MIGRATE", "127.0.0.1", String(target.master), key, "0", "5000"])
        let asked = try client.execute(.init(slot: slot, commands: [command("GET", key)], replayable: true)).get()
        #expect(asked == [.bulk(Array("v".utf8))])
        #expect(client.redirectionCount == 1)
        #expect(client.slotMap.master(forSlot: slot)?.port == source.master)  // ASK does not move the slot
        for node in [to, from] { _ = try node.text(["CLUSTER", "SETSLOT", String(slot), "NODE", target.masterID]) }
        let moved = try client.execute(.init(slot: slot, commands: [command("GET", key)], replayable: true)).get()
        #expect(moved == [.bulk(Array("v".utf8))])
        #expect(client.redirectionCount == 2)
        #expect(client.slotMap.master(forSlot: slot)?.port == target.master)
    }
}
