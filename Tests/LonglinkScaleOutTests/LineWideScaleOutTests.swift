import Foundation
import LonglinkServer
import LonglinkCore
import LonglinkGateway
import LonglinkRedis
import LonglinkStores
import LonglinkTestSupport
import Testing

/// `subscribe order://taxi/*` across two gateway nodes sharing a real redis-server: one Redis subscription per line
/// per node, every record of the line once (also beside a per-order subscription on the same node), in commit
/// order per order, nothing of other lines, and the documented live-only resume (`recovered = false`).
@Suite("Scale-out: line-wide subscriptions over the Redis broker", .serialized, .ownThreads)
struct LineWideScaleOutTests {
    /// Connects a raw client to `port` and subscribes to `route`; the `subscribed` frame.
    func follow(_ route: String, port: Int, since: StreamPosition? = nil) throws -> (FramePeer, Subscribed) {
        let peer = try FramePeer.connected(port: port)
        try peer.send(.subscribe(SubscribeRequest(requestID: 1, route: route, since: since)))
        let subscribed = try #require(try peer.next { frame -> Subscribed? in
            if case .subscribed(let subscribed) = frame { return subscribed }
            return nil
        })
        return (peer, subscribed)
    }

    /// Pushes read until `count` arrived or 20 s passed.
    func pushes(_ peer: FramePeer, count: Int) throws -> [Push] {
        var pushes: [Push] = []
        let deadline = ContinuousClock.now + .seconds(20)
        while pushes.count < count && ContinuousClock.now < deadline {
            if case .push(let push)? = try peer.next(timeout: .milliseconds(200)) { pushes.append(push) }
        }
        return pushes
    }

    @Test("a console on node A follows every taxi order published on node B, once each, in order per order")
    func acrossNodes() throws {
        let redis = try RedisServer()
        defer { redis.stop() }
        let nodes = try ["a", "b"].map { try startNode($0, redisPort: redis.port) }
        defer { nodes.forEach { $0.drainAndStop() } }
        let (console, subscribed) = try follow("order://taxi/*", port: nodes[0].gateway.port)
        #expect(subscribed.route == .lineWide(.order, "taxi") && !subscribed.recovered && subscribed.snapshot == nil)
        let (second, _) = try follow("order://taxi/*", port: nodes[0].gateway.port)
        // A per-order subscriber of l1 on the same node: its channel and the line's pattern both match l1's records.
        let (rider, _) = try follow("order://taxi/l1", port: nodes[0].gateway.port)
        let redisClient = try RedisBlockingConnection(RedisAddress(host: "127.0.0.1", port: redis.port))
        #expect(try redisClient.command(["PUBSUB", "NUMPAT"]).integer == 1, "one Redis subscription per line per node")

        let l1 = keyedTaxiChanges("l1", count: 6)
        let l2 = keyedTaxiChanges("l2", count: 6)
        for (a, b) in zip(l1, l2) {
            guard case .success = applyAndWait(nodes[1].writer, a), case .success = applyAndWait(nodes[1].writer, b) else {
                Issue.record("publish on node B failed"); return
            }
        }
        let express = OrderChange(orderID: OrderID("e1")!, line: .express, targetState: "created")
        guard case .success = applyAndWait(nodes[1].writer, express) else { Issue.record("express publish failed"); return }
        _ = applyAndWait(nodes[1].writer, keyedTaxiChanges("l3", count: 1)[0])  // a marker after the express record

        for peer in [console, second] {
            let received = try pushes(peer, count: 13)
            #expect(received.count == 13, "\(received.map(\.route.text))")
            #expect(!received.contains { $0.route.namespace == "express" })
            for order in ["l1", "l2"] {
                let offsets = received.filter { $0.route == .order(.taxi, OrderID(order)!) }.map(\.record.position.offset)
                #expect(offsets == Array(1...6), "\(order): \(offsets)")
            }
            #expect(try peer.next(timeout: .milliseconds(300)) == nil, "no duplicate push")
        }
        #expect(try pushes(rider, count: 6).map(\.record.position.offset) == Array(1...6))

        // Resume: live-only, so a reconnect with a position says recovered = false, and live records follow.
        console.close()
        let (again, resumed) = try follow("order://taxi/*", port: nodes[1].gateway.port, since: StreamPosition(epoch: 1, offset: 6))
        #expect(resumed.recovered == false && resumed.missed.isEmpty)
        guard case .success = applyAndWait(nodes[0].writer, keyedTaxiChanges("l4", count: 1)[0]) else { Issue.record("publish failed"); return }
        let live = try pushes(again, count: 1)
        #expect(live.first?.route == .order(.taxi, OrderID("l4")!))

        // The last line-wide subscriber on node A leaves: node A's pattern goes.
        second.close()
        #expect(eventually { (try? redisClient.command(["PUBSUB", "NUMPAT"]).integer) == 1 }, "node B's console still holds one")
        again.close()
        #expect(eventually { (try? redisClient.command(["PUBSUB", "NUMPAT"]).integer) == 0 })
    }

    @Test("with sharded channels a line-wide subscription takes every shard and filters locally")
    func sharded() throws {
        let redis = try RedisServer()
        defer { redis.stop() }
        let node = try RunningGateway.start(
            gateway: GatewayConfiguration(host: "127.0.0.1", port: 0, loopCount: 1, peer: PeerSettings(nodeID: "s"), drainPeriod: .milliseconds(200)),
            store: .redis(host: "127.0.0.1", port: redis.port, database: 0),
            broker: .redis(RedisAddress(host: "127.0.0.1", port: redis.port)),
            redis: RedisSettings(channels: .sharded(4))
        )
        defer { node.drainAndStop() }
        let (console, _) = try follow("order://taxi/*", port: node.gateway.port)
        for order in ["s1", "s2", "s3", "s4", "s5"] {
            guard case .success = applyAndWait(node.writer, keyedTaxiChanges(order, count: 1)[0]) else { Issue.record("publish failed"); return }
        }
        _ = applyAndWait(node.writer, OrderChange(orderID: OrderID("e1")!, line: .express, targetState: "created"))
        let received = try pushes(console, count: 5)
        #expect(Set(received.map(\.route.key)) == ["s1", "s2", "s3", "s4", "s5"])
        #expect(try console.next(timeout: .milliseconds(300)) == nil, "nothing of other lines, no duplicates")
    }
}
