import Foundation
import LonglinkCore
import LonglinkRedis
import LonglinkTestSupport
import Synchronization
import Testing

extension ToggleStoreFactory {
    /// `RedisToggleStore`s on the redis-server at `port`, each under a fresh key prefix (so a make is empty);
    /// `reopen` is another connection under the same prefix (another node).
    static func redis(port: Int) -> ToggleStoreFactory {
        let counter = Atomic<Int>(0)
        let address = RedisAddress(host: "127.0.0.1", port: port)
        return ToggleStoreFactory(
            name: "redis",
            make: { try RedisToggleStore(address: address, prefix: "tt\(counter.add(1, ordering: .relaxed).newValue)") },
            reopen: { old in
                guard let old = old as? RedisToggleStore else { throw NotRedisStore() }
                return try RedisToggleStore(address: address, prefix: old.prefix)
            }
        )
    }
}

@Suite("RedisToggleStore against a real redis-server", .ownThreads)
struct RedisToggleStoreTests {
    @Test("keeps the ToggleStore contract", arguments: ToggleStoreContract.checks)
    func contract(_ check: ToggleStoreContractCheck) throws {
        let server = try RedisServer()
        defer { server.stop() }
        try check.run(.redis(port: server.port))
    }

    @Test("toggles share the order store's epoch key, and a flushed Redis starts a new epoch at offset 1")
    func epochBesideTheOrders() throws {
        let server = try RedisServer()
        defer { server.stop() }
        let address = RedisAddress(host: "127.0.0.1", port: server.port)
        let orders = try RedisOrderStore(address: address, prefix: "both")
        defer { orders.shutdown() }
        let toggles = try RedisToggleStore(address: address, prefix: "both")
        defer { toggles.shutdown() }
        #expect(toggles.epoch == orders.epoch)
        #expect(try toggles.setToggle(app: "rider", name: "new_home", value: .bool(true), nowMillis: 1).position.offset == 1)
        #expect(try toggles.setToggle(app: "rider", name: "new_home", value: .bool(false), nowMillis: 2).position.offset == 2)
        let client = try RedisBlockingConnection(address)
        #expect(try client.command(["HGET", "both:toggles", "rider/new_home"]) == .bulk(Array("\(orders.epoch):2:2:b:0".utf8)))
        _ = try client.command(["FLUSHALL"])
        let after = try toggles.setToggle(app: "rider", name: "new_home", value: .string("x"), nowMillis: 3)
        #expect(after.position.offset == 1 && after.position.epoch != orders.epoch && after.position.epoch == toggles.epoch)
    }

    @Test("with WAIT for a replica the server does not have, a write fails retryably")
    func waitWithoutReplica() throws {
        let server = try RedisServer()
        defer { server.stop() }
        let store = try RedisToggleStore(
            address: RedisAddress(host: "127.0.0.1", port: server.port),
            prefix: "w",
            durability: RedisDurability(replicas: 1, timeout: .milliseconds(50))
        )
        defer { store.shutdown() }
        let error = OrderFixtures.storeError { () throws(StoreError) in
            try store.setToggle(app: "rider", name: "new_home", value: .bool(true), nowMillis: 1)
        }
        guard case .storage(let why, true)? = error else {
            Issue.record("expected a retryable storage error, got \(String(describing: error))")
            return
        }
        #expect(why.contains("replicas"), "\(why)")
    }

    @Test("a read-only store creates nothing and refuses writes")
    func readOnly() throws {
        let server = try RedisServer()
        defer { server.stop() }
        let address = RedisAddress(host: "127.0.0.1", port: server.port)
        let reader = try RedisToggleStore(address: address, prefix: "ro", readOnly: true)
        defer { reader.shutdown() }
        #expect(reader.epoch == 0)
        #expect(try reader.toggles(app: nil).isEmpty)
        #expect(OrderFixtures.storeError { () throws(StoreError) in try reader.setToggle(app: "a", name: "b", value: .bool(true), nowMillis: 1) } != nil)
        let client = try RedisBlockingConnection(address)
        #expect(try client.command(["DBSIZE"]) == .integer(0))
    }
}

@Suite("Toggle records on the Redis broker's channels", .ownThreads)
struct RedisToggleMessageTests {
    @Test("a toggle's record travels as a pub/sub message with its kind and value")
    func roundTrip() throws {
        for value in [ToggleValue.bool(false), .bool(true), .rollout(percent: 0), .rollout(percent: 100), .string("night: a/b"), .string("")] {
            let toggle = try #require(
                FeatureToggle(app: "rider", name: "new_home", value: value, position: StreamPosition(epoch: 7, offset: 2), updatedAtMillis: 99)
            )
            let message = RedisRecordCodec.message(toggle.record)
            let decoded = try #require(message.withUnsafeBytes { RedisRecordCodec.record(message: $0) })
            #expect(decoded == toggle.record, "\(value)")
            #expect(decoded.route == toggle.route && decoded.fields.toggle == value)
            #expect(message.dropLast().withUnsafeBytes { RedisRecordCodec.record(message: $0) } == nil)
        }
    }
}
