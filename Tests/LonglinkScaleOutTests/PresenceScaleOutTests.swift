import Foundation
import Glibc
import LonglinkCore
import LonglinkRedis
import LonglinkTestSupport
import Testing

/// Presence across `longlink serve` processes sharing a real redis-server: a driver on node A is in the presence a
/// rider reads on node B; `kill -9` of node A removes it within `--presence-ttl` (1 s here); a clean shutdown
/// (SIGTERM) removes a node's entries at once, long before its TTL; join/leave events reach subscribers on other nodes.
@Suite("Scale-out: presence in Redis with per-node entries", .serialized, .ownThreads)
struct PresenceScaleOutTests {
    func connect(port: Int, name: String, route: String, events: Bool = false) throws -> FramePeer {
        let peer = try FramePeer(port: port)
        try peer.send(.connect(ConnectRequest(token: "dev", clientName: name)))
        _ = try #require(try peer.next { if case .connected(let c) = $0 { c } else { nil } })
        try peer.send(.subscribe(SubscribeRequest(requestID: 1, route: route, presenceEvents: events)))
        _ = try #require(try peer.next { if case .subscribed(let s) = $0 { s } else { nil } })
        return peer
    }

    func clients(_ peer: FramePeer, _ route: String, id: UInt32) throws -> [String]? {
        try peer.send(.presence(PresenceRequest(requestID: id, route: route)))
        return try peer.next { frame in
            if case .presenceReply(let reply) = frame, reply.requestID == id { return reply.members.map(\.clientName).sorted() }
            return nil
        }
    }

    /// Polls presence through `peer` until `done` holds (bounded); the elapsed time, or nil on timeout.
    func until(_ peer: FramePeer, _ route: String, timeout: Duration, _ done: ([String]) -> Bool) throws -> Duration? {
        let started = ContinuousClock.now
        var id: UInt32 = 100
        while ContinuousClock.now - started < timeout {
            id += 1
            if let names = try clients(peer, route, id: id), done(names) { return ContinuousClock.now - started }
            usleep(50_000)
        }
        return nil
    }

    @Test("a driver on node A shows in presence on node B; kill -9 of A removes it within the TTL; SIGTERM at once")
    func nodes() throws {
        let redis = try RedisServer()
        defer { redis.stop() }
        let shared = ["--store", "redis://127.0.0.1:\(redis.port)/0", "--broker", "redis://127.0.0.1:\(redis.port)"]
        let nodeA = try NodeProcess(shared + ["--node-id", "a", "--presence-ttl", "1s"])
        let nodeB = try NodeProcess(shared + ["--node-id", "b", "--presence-ttl", "1s"])
        let nodeC = try NodeProcess(shared + ["--node-id", "c", "--presence-ttl", "60s"])
        try #require(nodeA.port > 0 && nodeB.port > 0 && nodeC.port > 0, "nodes did not start")
        let route = "order://taxi/p1"
        let driver = try connect(port: nodeA.port, name: "driver-app", route: route)
        let courier = try connect(port: nodeC.port, name: "courier-app", route: route)
        let rider = try connect(port: nodeB.port, name: "rider-app", route: route, events: true)
        _ = (driver, courier)
        #expect(try until(rider, route, timeout: .seconds(5)) { $0 == ["courier-app", "driver-app", "rider-app"] } != nil)

        // Join/leave events cross nodes: a second driver app on node A joins and leaves; the rider on B hears both.
        let second = try connect(port: nodeA.port, name: "driver-app-2", route: route)
        let joined = try rider.next(timeout: .seconds(5)) { frame -> PresenceEvent? in
            if case .presenceEvent(let event) = frame, event.member.clientName == "driver-app-2" { return event }
            return nil
        }
        #expect(joined?.joined == true && joined?.member.nodeID == "a", "\(String(describing: joined))")
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
        let cleaned = try until(rider, route, timeout: .seconds(5)) { $0 == ["rider-app"] }
        #expect(cleaned != nil, "node C's entries were not removed on SIGTERM")
        let ended = nodeC.process.waitForExit(timeout: .seconds(60))
        #expect(ended == .exited(0), "node C after SIGTERM: \(String(describing: ended))")
        nodeB.kill9()
    }
}
