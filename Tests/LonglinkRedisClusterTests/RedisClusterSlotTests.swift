import LonglinkRedis
import LonglinkTestSupport
import Testing

@Suite("Redis Cluster key slots, slot maps and redirections", .ownThreads)
struct RedisClusterSlotTests {
    @Test("CRC16/XMODEM and slots match the cluster spec's reference values")
    func specValues() {
        #expect(RedisClusterSlot.crc16("123456789") == 0x31C3)
        #expect(RedisClusterSlot.of("foo") == 12_182)
        #expect(RedisClusterSlot.of("somekey") == 11_058)
        #expect(RedisClusterSlot.of("foo{hash_tag}") == RedisClusterSlot.of("hash_tag"))
        #expect(RedisClusterSlot.of("{user1000}.following") == RedisClusterSlot.of("{user1000}.followers"))
        // Only the first {…} counts, an empty one means the whole key, and an unclosed one is part of the key.
        #expect(RedisClusterSlot.of("foo{}{bar}") == Int(RedisClusterSlot.crc16("foo{}{bar}") & 0x3FFF))
        #expect(RedisClusterSlot.of("foo{{bar}}zap") == RedisClusterSlot.of("{bar"))
        #expect(RedisClusterSlot.of("foo{bar}{zap}") == RedisClusterSlot.of("bar"))
        #expect(RedisClusterSlot.of("{") == Int(RedisClusterSlot.crc16("{") & 0x3FFF))
    }

    @Test("slots agree with CLUSTER KEYSLOT of a real cluster, hash tags included")
    func againstRealCluster() throws {
        let cluster = try RedisCluster.shared()
        let keys = [
            "foo", "bar", "", "{", "}", "{}", "{}{a}", "a{b}c", "{a}{b}", "{{a}}", "a{", "x}{y}", "longlink:o:{taxi/8812}",
            "longlink:h:{taxi/8812}", "longlink:r:{taxi/8812}", "longlink:epoch:{\(RedisClusterSlot.tag(for: 16_383))}",
            "ünïcødé{ключ}", String(repeating: "k", count: 300),
        ]
        for key in keys {
            #expect(RedisClusterSlot.of(key) == (try cluster.keySlot(key)), "\(key)")
        }
    }

    @Test("every slot has a short tag that hashes to it")
    func tagsCoverEverySlot() {
        for slot in 0..<RedisClusterSlot.count {
            let tag = RedisClusterSlot.tag(for: slot)
            #expect(tag.utf8.count <= 3)
            if RedisClusterSlot.of("x:{\(tag)}") != slot {
                Issue.record("tag \(tag) of slot \(slot) hashes elsewhere")
                return
            }
        }
    }

    @Test("a CLUSTER SLOTS reply becomes a map; MOVED updates it")
    func slotMap() throws {
        let queried = RedisAddress(host: "10.0.0.9", port: 7000)
        func node(_ host: String, _ port: Int64) -> RedisReply { .array([.bulk(Array(host.utf8)), .integer(port), .bulk(Array("id".utf8))]) }
        let reply = RedisReply.array([
            .array([.integer(0), .integer(5_460), node("10.0.0.1", 7000), node("10.0.0.4", 7003)]),
            .array([.integer(5_461), .integer(10_922), node("", 7001)]),
            .array([.integer(10_923), .integer(16_383), node("10.0.0.3", 7002), node("10.0.0.6", 7005)]),
        ])
        var map = try RedisClusterSlotMap(slots: reply, queried: queried)
        #expect(map.coversEverySlot)
        #expect(map.master(forSlot: 0) == RedisAddress(host: "10.0.0.1", port: 7000))
        #expect(map.master(forSlot: 5_461) == RedisAddress(host: "10.0.0.9", port: 7001))  // empty host: the one asked
        #expect(map.master(forSlot: 16_383) == RedisAddress(host: "10.0.0.3", port: 7002))
        #expect(map.shards.first?.replicas == [RedisAddress(host: "10.0.0.4", port: 7003)])
        #expect(map.slots(of: RedisAddress(host: "10.0.0.1", port: 7000)).count == 5_461)
        map.assign(42, to: RedisAddress(host: "10.0.0.3", port: 7002))
        #expect(map.master(forSlot: 42) == RedisAddress(host: "10.0.0.3", port: 7002))
        #expect(map.slots(of: RedisAddress(host: "10.0.0.1", port: 7000)).count == 5_460)
        let partial = try RedisClusterSlotMap(slots: .array([.array([.integer(0), .integer(99), node("h", 1)])]), queried: queried)
        #expect(!partial.coversEverySlot && partial.master(forSlot: 100) == nil)
        #expect(throws: RedisError.self) { try RedisClusterSlotMap(slots: .array([.array([.integer(5), .integer(1), node("h", 1)])]), queried: queried) }
        #expect(throws: RedisError.self) { try RedisClusterSlotMap(slots: .status("OK"), queried: queried) }
    }

    @Test("MOVED, ASK, TRYAGAIN and CLUSTERDOWN replies are recognised; other errors are not redirections")
    func redirections() {
        let current = RedisAddress(host: "127.0.0.1", port: 7000)
        #expect(RedisClusterRedirection(error: "MOVED 3999 127.0.0.1:6381", from: current) == .moved(slot: 3_999, to: RedisAddress(host: "127.0.0.1", port: 6381)))
        #expect(RedisClusterRedirection(error: "ASK 3999 10.1.2.3:6381", from: current) == .ask(slot: 3_999, to: RedisAddress(host: "10.1.2.3", port: 6381)))
        #expect(RedisClusterRedirection(error: "MOVED 12 :7002", from: current) == .moved(slot: 12, to: RedisAddress(host: "127.0.0.1", port: 7002)))
        #expect(RedisClusterRedirection(error: "MOVED 12 [::1]:7002", from: current) == .moved(slot: 12, to: RedisAddress(host: "::1", port: 7002)))
        #expect(RedisClusterRedirection(error: "TRYAGAIN Multiple keys request during rehashing of slot", from: current) == .tryAgain)
        #expect(RedisClusterRedirection(error: "CLUSTERDOWN The cluster is down", from: current) == .clusterDown)
        #expect(RedisClusterRedirection(error: "ERR unknown command", from: current) == nil)
        #expect(RedisClusterRedirection(error: "MOVED 99999 127.0.0.1:1", from: current) == nil)
        #expect(RedisClusterRedirection(error: "MOVED x 127.0.0.1:1", from: current) == nil)
        #expect(RedisClusterRedirection(.status("MOVED 1 h:1"), from: current) == nil)
    }

    @Test("redis-cluster:// URLs list seeds")
    func addresses() {
        let address = RedisClusterAddress(url: "redis-cluster://10.0.0.1:7000,10.0.0.2,[::1]:7002")
        #expect(address?.seeds == [
            RedisAddress(host: "10.0.0.1", port: 7000), RedisAddress(host: "10.0.0.2", port: 6379), RedisAddress(host: "::1", port: 7002),
        ])
        #expect(address?.description == "redis-cluster://10.0.0.1:7000,10.0.0.2:6379,[::1]:7002")
        for bad in ["redis://h:1", "redis-cluster://", "redis-cluster://h:1,", "redis-cluster://h:1/0", "redis-cluster://h:99999"] {
            #expect(RedisClusterAddress(url: bad) == nil, "\(bad)")
        }
    }
}
