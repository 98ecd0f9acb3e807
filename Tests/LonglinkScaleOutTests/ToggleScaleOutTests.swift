import LonglinkServer
import LonglinkCore
import LonglinkGateway
import LonglinkRedis
import LonglinkStores
import LonglinkTestSupport
import Testing

/// Feature toggles on nodes sharing one real redis-server for their store and broker.
@Suite("Scale-out: feature toggles on nodes sharing Redis", .serialized, .ownThreads)
struct ToggleScaleOutTests {
    @Test("a toggle set on node B reaches subscribers on nodes A and C, and a later subscriber on C reads it")
    func crossNode() async throws {
        let redis = try RedisServer()
        defer { redis.stop() }
        let nodes = try ["a", "b", "c"].map { try startNode($0, redisPort: redis.port) }
        defer { nodes.forEach { $0.drainAndStop() } }
        let route = try #require(FeatureToggle(app: "rider", name: "new_home", value: .bool(false))?.route)
        let followers = [Follower(route, ports: [nodes[0].gateway.port]), Follower(route, ports: [nodes[2].gateway.port])]
        for follower in followers { try follower.connect() }
        let values: [ToggleValue] = [.bool(true), .rollout(percent: 25), .string("night")]
        for value in values {
            _ = try await nodes[1].toggles.set(app: "rider", name: "new_home", value: value)
        }
        for follower in followers {
            #expect(try follower.pump(timeout: .seconds(20)) { follower.offsets.count >= values.count })
            #expect(follower.offsets == [1, 2, 3])
        }
        // Stored once, in Redis: every node's toggle store reads the same value.
        let late = Follower(route, ports: [nodes[2].gateway.port])
        try late.connect()
        #expect(late.position?.offset == 3)
        let reader = try RedisToggleStore(address: RedisAddress(host: "127.0.0.1", port: redis.port))
        defer { reader.shutdown() }
        #expect(try reader.toggle(app: "rider", name: "new_home")?.value == .string("night"))
    }
}
