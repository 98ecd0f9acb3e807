import Foundation
import Glibc
import LonglinkServer
import LonglinkCore
import LonglinkGateway
import LonglinkRedis
import LonglinkStores
import LonglinkTestSupport
import Testing

/// Line-wide subscriptions and shared presence on the test suite's real Redis Cluster (3 masters, 3 replicas),
/// as on one Redis: a console on node A follows orders published on node B on every shard; presence of a
/// subscriber on one node is seen from another, with join/leave events, and a node killed with `kill -9` leaves it
/// within `--presence-ttl`.
@Suite("Scale-out: line-wide subscriptions and presence on a Redis Cluster", .serialized, .ownThreads)
struct ClusterParityScaleOutTests {
    /// A gateway node in this process on the cluster (store and broker), under `prefix`.
    func startClusterNode(_ name: String, cluster: RedisCluster, prefix: String) throws -> RunningGateway {
        try RunningGateway.start(
            gateway: GatewayConfiguration(host: "127.0.0.1", port: 0, loopCount: 1, peer: PeerSettings(nodeID: name), drainPeriod: .milliseconds(200)),
            store: try StoreSpecification(parsing: cluster.url),
            broker: .redisCluster(try #require(RedisClusterAddress(url: cluster.url))),
            redis: RedisSettings(prefix: prefix)
        )
    }

    /// A taxi order id whose keys are in one of `shard`'s slots.
    func orderID(_ base: String, on shard: RedisCluster.Shard) -> String {
        for index in 0..<1_000_000 {
            let id = "\(base)-\(index)"
            let slot = RedisClusterSlot.of("taxi/\(id)")
            if shard.slots.contains(where: { $0.contains(slot) }) { return id }
        }
        preconditionFailure("no id for \(base)")
    }

    func follow(_ route: String, port: Int) throws -> FramePeer {
        let peer = try FramePeer.connected(port: port)
        try peer.send(.subscribe(SubscribeRequest(requestID: 1, route: route)))
        let subscribed = try #require(try peer.next { frame -> Subscribed? in
            if case .subscribed(let subscribed) = frame { return subscribed }
            return nil
        })
        #expect(!route.hasSuffix("*") || !subscribed.recovered, "a line-wide subscription is live-only")
        return peer
    }

    func pushes(_ peer: FramePeer, count: Int) throws -> [Push] {
        var pushes: [Push] = []
        let deadline = ContinuousClock.now + .seconds(20)
        while pushes.count < count && ContinuousClock.now < deadline {
            if case .push(let push)? = try peer.next(timeout: .milliseconds(200)) { pushes.append(push) }
        }
        return pushes
    }

    @Test("a console on node A follows taxi orders on every shard published on node B, once each, in order")
    func lineWide() throws {
        let cluster = try RedisCluster.shared()
        let prefix = "line-\(UUID().uuidString.prefix(8))"
        let nodes = try ["a", "b"].map { try startClusterNode($0, cluster: cluster, prefix: prefix) }
        defer { nodes.forEach { $0.drainAndStop() } }
        let shards = try cluster.shards()
        let ids = shards.map { orderID("lw\($0.master)", on: $0) }
        #expect(Set(ids.map { try! cluster.master(ofSlot: RedisClusterSlot.of("taxi/\($0)")) }).count == shards.count)

        let console = try follow("order://taxi/*", port: nodes[0].gateway.port)
        // A rider of the first order on the same node: its route's channel and the line's both carry its records.
        let rider = try follow("order://taxi/\(ids[0])", port: nodes[0].gateway.port)
        let lineChannel = "\(prefix):l:{taxi}"
        let lineMaster = try cluster.master(ofSlot: RedisClusterSlot.of(lineChannel))
        let numsub = try cluster.client(lineMaster).command(["PUBSUB", "SHARDNUMSUB", lineChannel])
        #expect(numsub.array?.last?.integer == 1, "one subscription of the line per node: \(numsub)")

        let perOrder = 4
        for index in 0..<perOrder {
            for id in ids {
                guard case .success = applyAndWait(nodes[1].writer, keyedTaxiChanges(id, count: perOrder)[index]) else {
                    Issue.record("publish of \(id) on node B failed")
                    return
                }
            }
        }
        guard case .success = applyAndWait(nodes[1].writer, OrderChange(orderID: OrderID("e1")!, line: .express, targetState: "created")) else {
            Issue.record("express publish failed")
            return
        }
        let received = try pushes(console, count: ids.count * perOrder)
        #expect(received.count == ids.count * perOrder, "\(received.map { "\($0.route.text)@\($0.record.position.offset)" })")
        #expect(!received.contains { $0.route.namespace == "express" })
        for id in ids {
            let offsets = received.filter { $0.route == .order(.taxi, OrderID(id)!) }.map(\.record.position.offset)
            #expect(offsets == Array(1...UInt64(perOrder)), "\(id): \(offsets)")
        }
        #expect(try console.next(timeout: .milliseconds(500)) == nil, "no duplicate push")
        #expect(try pushes(rider, count: perOrder).map(\.record.position.offset) == Array(1...UInt64(perOrder)))
    }

    func connect(port: Int, name: String, route: String, events: Bool = false) throws -> FramePeer {
        let peer = try FramePeer(port: port)
        try peer.send(.connect(ConnectRequest(token: "dev", clientName: name)))
        _ = try #require(try peer.next { if case .connected(let c) = $0 { c } else { nil } })
        try peer.send(.subscribe(SubscribeRequest(requestID: 1, route: route, presenceEvents: events)))
        _ = try #require(try peer.next { if case .subscribed(let s) = $0 { s } else { nil } })
        return peer
    }

    /// Polls presence through `peer` until `done` holds (bounded); the elapsed time, or nil on timeout.
    func until(_ peer: FramePeer, _ route: String, timeout: Duration, _ done: ([String]) -> Bool) throws -> Duration? {
        let started = ContinuousClock.now
        var id: UInt32 = 100
        while ContinuousClock.now - started < timeout {
            id += 1
            try peer.send(.presence(PresenceRequest(requestID: id, route: route)))
            let names = try peer.next { frame in
                if case .presenceReply(let reply) = frame, reply.requestID == id { return reply.members.map(\.clientName).sorted() }
                return nil
            }
            if let names, done(names) { return ContinuousClock.now - started }
            usleep(50_000)
        }
        return nil
    }

    @Test("presence on node A is seen from node B, with join/leave events; kill -9 of A removes it within the TTL")
    func presence() throws {
        let cluster = try RedisCluster.shared()
        let shared = ["--store", cluster.url, "--broker", cluster.url]
        let nodeA = try NodeProcess(shared + ["--node-id", "cpa", "--presence-ttl", "1s"])
        let nodeB = try NodeProcess(shared + ["--node-id", "cpb", "--presence-ttl", "1s"])
        let nodeC = try NodeProcess(shared + ["--node-id", "cpc", "--presence-ttl", "60s"])
        defer { [nodeA, nodeB, nodeC].forEach { $0.kill9() } }
        try #require(nodeA.port > 0 && nodeB.port > 0 && nodeC.port > 0, "nodes did not start")
        let route = "order://taxi/cp-\(UUID().uuidString.prefix(8))"
        let driver = try connect(port: nodeA.port, name: "driver-app", route: route)
        let courier = try connect(port: nodeC.port, name: "courier-app", route: route)
        let rider = try connect(port: nodeB.port, name: "rider-app", route: route, events: true)
        _ = (driver, courier)
        #expect(try until(rider, route, timeout: .seconds(5)) { $0 == ["courier-app", "driver-app", "rider-app"] } != nil)

        let second = try connect(port: nodeA.port, name: "driver-app-2", route: route)
        let joined = try rider.next(timeout: .seconds(5)) { frame -> PresenceEvent? in
            if case .presenceEvent(let event) = frame, event.member.clientName == "driver-app-2" { return event }
            return nil
        }
        #expect(joined?.joined == true && joined?.member.nodeID == "cpa", "\(String(describing: joined))")
        second.close()
        let left = try rider.next(timeout: .seconds(5)) { frame -> PresenceEvent? in
            if case .presenceEvent(let event) = frame, event.member.clientName == "driver-app-2", !event.joined { return event }
            return nil
        }
        #expect(left != nil, "the leave on node A reached the rider on node B")

        nodeA.kill9()
        let gone = try until(rider, route, timeout: .seconds(5)) { !$0.contains("driver-app") }
        let elapsed = try #require(gone, "node A's driver still in presence 5 s after kill -9")
        #expect(elapsed < .milliseconds(1_600), "TTL 1 s plus a refresh period at most; took \(elapsed)")

        // Node C has a 60 s TTL: only a clean shutdown can remove its entry quickly.
        nodeC.process.signal(SIGTERM)
        #expect(try until(rider, route, timeout: .seconds(5)) { $0 == ["rider-app"] } != nil, "node C's entries were not removed on SIGTERM")
        let ended = nodeC.process.waitForExit(timeout: .seconds(60))
        #expect(ended == .exited(0), "node C after SIGTERM: \(String(describing: ended))")
    }
}
