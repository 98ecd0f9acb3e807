import Foundation
import LonglinkCommands
import LonglinkServer
import LonglinkCore
import LonglinkGateway
import LonglinkStores
import LonglinkRedis
import LonglinkSQLite
import LonglinkTestSupport
import Synchronization
import Testing

/// Several gateway nodes sharing one real redis-server (started and stopped by each test on a free port).
@Suite("Scale-out: gateway nodes sharing Redis", .serialized, .ownThreads)
struct ScaleOutTests {
    @Test("a record published on node B reaches subscribers on nodes A and C once, in order")
    func crossNode() throws {
        let redis = try RedisServer()
        defer { redis.stop() }
        let nodes = try ["a", "b", "c"].map { try startNode($0, redisPort: redis.port) }
        defer { nodes.forEach { $0.drainAndStop() } }
        let route = Route.order(.taxi, OrderID("x1")!)
        let followers = [Follower(route, ports: [nodes[0].gateway.port]), Follower(route, ports: [nodes[2].gateway.port])]
        for follower in followers { try follower.connect() }
        let count = 50
        for change in keyedTaxiChanges("x1", count: count) {
            guard case .success = applyAndWait(nodes[1].writer, change) else {
                Issue.record("publish on node B failed")
                return
            }
        }
        for follower in followers {
            #expect(try follower.pump(timeout: .seconds(20)) { follower.offsets.count >= count })
            #expect(follower.offsets == Array(1...UInt64(count)))
        }
        // The apply script published each record once; no node published it again.
        let stats = try RedisBlockingConnection(RedisAddress(host: "127.0.0.1", port: redis.port))
            .command(["INFO", "commandstats"]).string ?? ""
        #expect(stats.contains("cmdstat_publish:calls=\(count),"))
    }

    @Test("concurrent publishes to the same orders from two nodes stay in a legal order")
    func concurrentNodes() throws {
        let redis = try RedisServer()
        defer { redis.stop() }
        let nodes = try ["a", "b"].map { try startNode($0, redisPort: redis.port) }
        defer { nodes.forEach { $0.drainAndStop() } }
        let orders = (0..<20).map { "c\($0)" }
        let accepted = Mutex<[String: Int]>([:])
        DispatchQueue.concurrentPerform(iterations: 2) { node in
            for step in 0..<8 {
                for order in orders {
                    var change = OrderFixtures.taxiLifecycle(order)[step]
                    change.idempotencyKey = ""
                    if case .success(let applied) = applyAndWait(nodes[node].writer, change), !applied.deduplicated {
                        accepted.withLock { $0[order, default: 0] += 1 }
                    }
                }
            }
        }
        let reader = try RedisOrderStore(address: RedisAddress(host: "127.0.0.1", port: redis.port))
        defer { reader.shutdown() }
        for order in orders {
            let history = try #require(try OrderFixtures.history(reader, .taxi, order))
            #expect(history.map(\.position.offset) == Array(1...UInt64(history.count)))
            for (previous, next) in zip(history, history.dropFirst()) { #expect(next.fromState == previous.toState) }
            #expect(history.count == accepted.withLock { $0[order] ?? 0 })
        }
    }

    @Test("redis-server restarts under load: nodes reconnect and resubscribe, publishes fail retryably meanwhile, subscribers lose nothing")
    func redisRestart() throws {
        let directory = NSTemporaryDirectory() + "longlink-redis-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var redis = try RedisServer(persistentDirectory: directory)
        let port = redis.port
        let nodes = try ["a", "b"].map { try startNode($0, redisPort: port) }
        defer { nodes.forEach { $0.drainAndStop() } }
        let route = Route.order(.taxi, OrderID("r1")!)
        let follower = Follower(route, ports: [nodes[0].gateway.port, nodes[1].gateway.port])
        try follower.connect()
        let count = 300
        let writer = nodes[1].writer
        let publisher = BackgroundPublisher(keyedTaxiChanges("r1", count: count)) { writer }
        #expect(try follower.pump(timeout: .seconds(30)) { follower.offsets.count >= 80 })
        redis.stop()
        #expect(eventually { publisher.retryableFailures.load(ordering: .relaxed) > 0 })
        redis = try RedisServer(port: port, persistentDirectory: directory)
        defer { redis.stop() }
        #expect(publisher.waitUntilFinished())
        #expect(publisher.errors.withLock { $0 } == [])
        #expect(try follower.pump(timeout: .seconds(30)) { follower.offsets.count >= count })
        #expect(follower.offsets == Array(1...UInt64(count)))
        #expect(follower.recoveries.allSatisfy { $0 })
        #expect(follower.connections >= 2)  // node A dropped it after resubscribing, and it resumed
        let brokerA = try #require(nodes[0].broker as? RedisBroker)
        #expect(brokerA.reconnectCount >= 1 && brokerA.isConnected)
    }

    @Test("FLUSHALL is a new epoch: a resuming subscriber gets recovered = false")
    func flushAll() throws {
        let redis = try RedisServer()
        defer { redis.stop() }
        let node = try startNode("a", redisPort: redis.port)
        defer { node.drainAndStop() }
        let route = Route.order(.taxi, OrderID("f1")!)
        let follower = Follower(route, ports: [node.gateway.port])
        try follower.connect()
        for change in keyedTaxiChanges("f1", count: 3) { _ = applyAndWait(node.writer, change) }
        #expect(try follower.pump(timeout: .seconds(10)) { follower.offsets.count >= 3 })
        let old = try #require(follower.position)
        try RedisBlockingConnection(RedisAddress(host: "127.0.0.1", port: redis.port)).command(["FLUSHALL"])
        let client = try RawClient(port: node.gateway.port)
        let subscribed = try #require(try client.follow(route, since: old))
        #expect(!subscribed.recovered)
        #expect(subscribed.position.epoch != old.epoch)
        #expect(subscribed.snapshot == nil)
    }

    @Test("a node killed with SIGKILL under load: its subscribers resume on another node with nothing lost")
    func killNode() throws {
        let redis = try RedisServer()
        defer { redis.stop() }
        let doomed = try NodeProcess([
            "--store", "redis://127.0.0.1:\(redis.port)/0", "--broker", "redis://127.0.0.1:\(redis.port)",
        ])
        try #require(doomed.port > 0, "the child node did not start")
        let survivor = try startNode("b", redisPort: redis.port)
        defer { survivor.drainAndStop() }
        let route = Route.order(.taxi, OrderID("k1")!)
        let follower = Follower(route, ports: [doomed.port, survivor.gateway.port])
        try follower.connect()
        let count = 200
        let writer = survivor.writer
        let publisher = BackgroundPublisher(keyedTaxiChanges("k1", count: count)) { writer }
        #expect(try follower.pump(timeout: .seconds(30)) { follower.offsets.count >= 60 })
        doomed.kill9()
        #expect(try follower.pump(timeout: .seconds(60)) { follower.offsets.count >= count })
        #expect(publisher.waitUntilFinished())
        #expect(follower.offsets == Array(1...UInt64(count)))
        #expect(follower.connections >= 2)
        #expect(follower.recoveries.allSatisfy { $0 })
    }

    @Test("longlink migrate SQLite → Redis → SQLite with --verify")
    func migrate() async throws {
        let redis = try RedisServer()
        defer { redis.stop() }
        let directory = NSTemporaryDirectory() + "longlink-migrate-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let source = try SQLiteOrderStore(path: "\(directory)/a.sqlite")
        for order in ["m1", "m2", "m3"] {
            for change in OrderFixtures.taxiLifecycle(order).prefix(5) { _ = try source.apply(change) }
        }
        _ = try source.apply(OrderFixtures.change("e1", BuiltInLines.created, line: .express, key: "k-e1"))
        source.shutdown()
        let url = "redis://127.0.0.1:\(redis.port)/0"
        for (from, to) in [("sqlite:\(directory)/a.sqlite", url), (url, "sqlite:\(directory)/b.sqlite")] {
            let io = CommandIO.capturing()
            let code = await LonglinkCLI.main(arguments: ["migrate", "--from", from, "--to", to, "--verify"], environment: [:], io: io)
            #expect(code == 0, "\(io.capturedErr)")
            #expect(io.capturedOut.contains("copied 4 orders"))
            #expect(io.capturedOut.contains("verified 4 orders: identical"))
        }
        let copy = try SQLiteOrderStore(path: "\(directory)/b.sqlite")
        defer { copy.shutdown() }
        let original = try SQLiteOrderStore(path: "\(directory)/a.sqlite")
        defer { original.shutdown() }
        for order in ["m1", "m2", "m3"] {
            let a = try #require(try original.retainedHistory(of: .taxi, OrderFixtures.id(order)))
            let b = try #require(try copy.retainedHistory(of: .taxi, OrderFixtures.id(order)))
            #expect(ChangeValidation.isSameOrder(a, b))
        }
        #expect(try copy.apply(OrderFixtures.change("e1", BuiltInLines.created, line: .express, key: "k-e1")).deduplicated)
    }
}
