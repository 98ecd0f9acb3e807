import LonglinkCore
import LonglinkStores
import LonglinkTestSupport
import Testing

@Suite("StoreSpecification", .ownThreads)
struct StoreSpecificationTests {
    @Test(
        "parses memory, sqlite and redis specifications",
        arguments: [
            ("memory", StoreSpecification.memory),
            ("sqlite:/tmp/orders.db", .sqlite(path: "/tmp/orders.db")),
            ("sqlite:orders.db", .sqlite(path: "orders.db")),
            ("redis://127.0.0.1:6380/2", .redis(host: "127.0.0.1", port: 6380, database: 2)),
            ("redis://cache", .redis(host: "cache", port: 6379, database: 0)),
            ("redis://cache:7000", .redis(host: "cache", port: 7000, database: 0)),
            ("redis-cluster://10.0.0.1:7000", .redisCluster(seeds: ["10.0.0.1:7000"])),
            ("redis-cluster://a:7000,b:7001,[::1]:7002", .redisCluster(seeds: ["a:7000", "b:7001", "[::1]:7002"])),
        ]
    )
    func parses(_ text: String, _ expected: StoreSpecification) throws {
        #expect(try StoreSpecification(parsing: text) == expected)
    }

    @Test(
        "refuses unknown and malformed values with a clear error",
        arguments: [
            "", "Memory", "postgres://db", "sqlite:", "redis://", "redis://h:0", "redis://h:x/1", "redis://h/-1",
            "sqlite", "redis-cluster://", "redis-cluster://a", "redis-cluster://a:1,", "redis-cluster://a:7000/0",
            "redis-cluster://:7000",
        ]
    )
    func refuses(_ text: String) {
        #expect(throws: StoreSpecificationError.self) { try StoreSpecification(parsing: text) }
        do {
            _ = try StoreSpecification(parsing: text)
        } catch {
            #expect("\(error)".contains("'\(text)'"))
        }
    }
}
