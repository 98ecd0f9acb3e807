import Foundation
import LonglinkRedis
import LonglinkTestSupport
import Testing

/// Arguments as bytes.
func command(_ arguments: String...) -> [[UInt8]] { arguments.map { Array($0.utf8) } }

@Suite("RedisClusterClient against a real cluster", .ownThreads)
struct RedisClusterClientTests {
    @Test("discovers every master from one seed and routes keys of every shard, pipelined per node")
    func routesAcrossShards() throws {
        let cluster = try RedisCluster.shared()
        let client = try RedisClusterClient(try #require(RedisClusterAddress(url: cluster.singleSeedURL)))
        #expect(client.slotMap.coversEverySlot)
        #expect(Set(client.slotMap.masters.map(\.port)) == Set(try cluster.shards().map(\.master)))
        let prefix = "route-\(UUID().uuidString)"
        let keys = (0..<300).map { "\(prefix):\($0)" }
        let writes = client.execute(keys.map { key in
            RedisClusterClient.Request(slot: RedisClusterSlot.of(key), commands: [command("SET", key, "v-\(key)")], replayable: false)
        })
        #expect(writes.allSatisfy { (try? $0.get()) == [.status("OK")] })
        let reads = client.execute(keys.map { key in
            RedisClusterClient.Request(slot: RedisClusterSlot.of(key), commands: [command("GET", key)], replayable: true)
        })
        #expect(reads.map { try? $0.get() } == keys.map { [RedisReply.bulk(Array("v-\($0)".utf8))] })
        #expect(client.redirectionCount == 0)
        // Each key is where the cluster says its slot is.
        let shards = try cluster.shards()
        let byPort = Dictionary(uniqueKeysWithValues: shards.map { ($0.master, $0) })
        var perShard: [Int: Int] = [:]
        for key in keys {
            let port = try #require(client.slotMap.master(forSlot: RedisClusterSlot.of(key))?.port)
            perShard[port, default: 0] += 1
            let owner = try cluster.client(port).command(["EXISTS", key])
            #expect(owner == .integer(1))
            #expect(byPort[port] != nil)
        }
        #expect(perShard.count == 3)
    }

    @Test("a request sent to the wrong node follows MOVED and still answers")
    func followsMoved() throws {
        let cluster = try RedisCluster.shared()
        let client = try RedisClusterClient(try #require(RedisClusterAddress(url: cluster.url)))
        let key = "moved-\(UUID().uuidString)"
        let slot = RedisClusterSlot.of(key)
        let owner = try #require(client.slotMap.master(forSlot: slot))
        // A slot served by another master: the request lands there and is redirected.
        let elsewhere = try #require((0..<RedisClusterSlot.count).first { client.slotMap.master(forSlot: $0) != owner })
        let write = client.execute(.init(slot: elsewhere, commands: [command("SET", key, "1")], replayable: false))
        #expect(try write.get() == [.status("OK")])
        #expect(client.redirectionCount == 1)
        #expect(try cluster.client(owner.port).command(["GET", key]) == .bulk("1"))
        #expect(client.slotMap.master(forSlot: slot) == owner)
    }

    @Test("a MULTI block for one slot runs atomically; keys of two slots are refused with CROSSSLOT")
    func transactions() throws {
        let cluster = try RedisCluster.shared()
        let client = try RedisClusterClient(try #require(RedisClusterAddress(url: cluster.url)))
        let tag = "{tx-\(UUID().uuidString)}"
        let replies = try client.execute(.init(
            slot: RedisClusterSlot.of(tag),
            commands: [command("MULTI"), command("SET", "a\(tag)", "1"), command("INCR", "b\(tag)"), command("EXEC")],
            replayable: false
        )).get()
        #expect(replies.last == .array([.status("OK"), .integer(1)]))
        let cross = try client.execute(.init(slot: RedisClusterSlot.of("a"), commands: [command("MSET", "a", "1", "b", "2")], replayable: false)).get()
        guard case .error(let message) = cross.first else {
            Issue.record("MSET across slots answered \(cross)")
            return
        }
        #expect(message.hasPrefix("CROSSSLOT"))
    }
}
