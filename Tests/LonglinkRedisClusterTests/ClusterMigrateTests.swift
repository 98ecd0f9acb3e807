import Foundation
import LonglinkCommands
import LonglinkCore
import LonglinkRedis
import LonglinkSQLite
import LonglinkTestSupport
import Testing

@Suite("longlink migrate to and from a Redis Cluster", .ownThreads)
struct ClusterMigrateTests {
    @Test("SQLite → Redis Cluster → SQLite with --verify, orders spread over every shard")
    func roundTrip() async throws {
        let cluster = try RedisCluster.shared()
        let directory = NSTemporaryDirectory() + "longlink-cluster-migrate-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let source = try SQLiteOrderStore(path: "\(directory)/a.sqlite")
        let orders = (0..<30).map { "mig\($0)" }
        for order in orders {
            for change in OrderFixtures.taxiLifecycle(order).prefix(4) { _ = try source.apply(change) }
        }
        _ = try source.apply(OrderFixtures.change("e1", BuiltInLines.created, line: .express, key: "k-e1"))
        source.shutdown()
        // The shared cluster's other tests use their own prefixes; migrate uses the default one.
        for (from, to) in [("sqlite:\(directory)/a.sqlite", cluster.url), (cluster.singleSeedURL, "sqlite:\(directory)/b.sqlite")] {
            let io = CommandIO.capturing()
            let code = await LonglinkCLI.main(arguments: ["migrate", "--from", from, "--to", to, "--verify"], environment: [:], io: io)
            #expect(code == 0, "\(io.capturedErr)")
            #expect(io.capturedOut.contains("copied 31 orders"), "\(io.capturedOut)")
            #expect(io.capturedOut.contains("verified 31 orders: identical"), "\(io.capturedOut)")
        }
        // The copy sits on every shard, one slot per order.
        let store = try RedisOrderStore(cluster: RedisClusterAddress(url: cluster.url)!)
        defer { store.shutdown() }
        let masters = Set(try orders.map { try cluster.master(ofSlot: RedisClusterSlot.of("taxi/\($0)")) })
        #expect(masters.count == 3)
        #expect(try store.snapshot(of: .taxi, OrderFixtures.id("mig7"))?.position.offset == 4)
        let copy = try SQLiteOrderStore(path: "\(directory)/b.sqlite")
        defer { copy.shutdown() }
        let original = try SQLiteOrderStore(path: "\(directory)/a.sqlite")
        defer { original.shutdown() }
        for order in orders {
            let a = try #require(try original.retainedHistory(of: .taxi, OrderFixtures.id(order)))
            let b = try #require(try copy.retainedHistory(of: .taxi, OrderFixtures.id(order)))
            #expect(ChangeValidation.isSameOrder(a, b))
        }
        #expect(try copy.apply(OrderFixtures.change("e1", BuiltInLines.created, line: .express, key: "k-e1")).deduplicated)
    }
}
