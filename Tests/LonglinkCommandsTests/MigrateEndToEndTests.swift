import Foundation
import LonglinkCommands
import LonglinkCore
import LonglinkSQLite
import LonglinkTestSupport
import Testing

/// `longlink migrate` against real SQLite files, a real redis-server and a real `serve` with a shadow store: it
/// never reports success for a migration that lost or never read data.
@Suite("longlink migrate end to end", .serialized, .ownThreads)
struct MigrateEndToEndTests {
    /// A SQLite store at `path` holding `orders` taxi orders, order `i` moved through `1 + i % 5` states.
    func populate(_ path: String, orders: Int = 12) throws {
        let store = try SQLiteOrderStore(path: path)
        defer { store.shutdown() }
        for i in 0..<orders {
            for change in OrderFixtures.taxiLifecycle("o\(i)").prefix(1 + i % 5) { _ = try store.apply(change) }
        }
    }

    @Test("a missing source is an error naming the path, and nothing is created there")
    func missingSource() async throws {
        let directory = try TemporaryDirectory()
        let source = "\(directory.path)/typo/nosuch.sqlite"
        let (code, io) = await run(["migrate", "--from", "sqlite:\(source)", "--to", "sqlite:\(directory.path)/t.sqlite"])
        #expect(code == 1)
        #expect(io.capturedErr.contains(source), "\(io.capturedErr)")
        #expect(!io.capturedOut.contains("copied"))
        #expect(!FileManager.default.fileExists(atPath: "\(directory.path)/typo"))
        #expect(!FileManager.default.fileExists(atPath: "\(directory.path)/t.sqlite"))

        let flat = "\(directory.path)/nosuch.sqlite"
        let (again, againIO) = await run(["migrate", "--from", "sqlite:\(flat)", "--to", "sqlite:\(directory.path)/t.sqlite"])
        #expect(again == 1)
        #expect(againIO.capturedErr.contains(flat))
        #expect(!FileManager.default.fileExists(atPath: flat))
    }

    @Test("an empty file or a SQLite file without Longlink's tables is refused as source, naming the path")
    func emptySchemaSource() async throws {
        let directory = try TemporaryDirectory()
        let empty = "\(directory.path)/empty.sqlite"
        _ = FileManager.default.createFile(atPath: empty, contents: Data())
        let foreign = "\(directory.path)/foreign.sqlite"
        let made = try ProcessRunner.run(["sqlite3", foreign, "CREATE TABLE notes (x TEXT); INSERT INTO notes VALUES ('hi');"])
        try #require(made.status == 0, "\(made.text)")
        for path in [empty, foreign] {
            let before = try Data(contentsOf: URL(fileURLWithPath: path))
            let (code, io) = await run(["migrate", "--from", "sqlite:\(path)", "--to", "sqlite:\(directory.path)/t.sqlite"])
            #expect(code == 1, "\(path)")
            #expect(io.capturedErr.contains(path) && io.capturedErr.contains("not a Longlink store"), "\(io.capturedErr)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "the source was written")
        }
    }

    @Test("an empty Redis and the memory store are refused as sources; the Redis is left untouched")
    func emptyRedisAndMemorySource() async throws {
        let redis = try RedisServer()
        defer { redis.stop() }
        let directory = try TemporaryDirectory()
        let (code, io) = await run(["migrate", "--from", "\(redis.url)/3", "--to", "sqlite:\(directory.path)/t.sqlite"])
        #expect(code == 1)
        #expect(io.capturedErr.contains("127.0.0.1:\(redis.port)/3") && io.capturedErr.contains("no Longlink store"), "\(io.capturedErr)")
        let keys = try ProcessRunner.run(["redis-cli", "-p", String(redis.port), "-n", "3", "DBSIZE"])
        #expect(keys.text.trimmingCharacters(in: .whitespacesAndNewlines) == "0", "\(keys.text)")

        let (memory, memoryIO) = await run(["migrate", "--from", "memory", "--to", "sqlite:\(directory.path)/t.sqlite"])
        #expect(memory == 2)
        #expect(memoryIO.capturedErr.contains("memory"))
        #expect(!FileManager.default.fileExists(atPath: "\(directory.path)/t.sqlite"))
    }

    @Test("feature toggles are copied and verified")
    func toggles() async throws {
        let directory = try TemporaryDirectory()
        let source = "\(directory.path)/source.sqlite"
        let target = "\(directory.path)/target.sqlite"
        try populate(source)
        do {
            let store = try SQLiteToggleStore(path: source)
            defer { store.shutdown() }
            _ = try store.setToggle(app: "rider", name: "new_home", value: .bool(true), nowMillis: 1_000)
            _ = try store.setToggle(app: "rider", name: "new_home", value: .rollout(percent: 25), nowMillis: 2_000)
            _ = try store.setToggle(app: "driver", name: "map.style", value: .string("night"), nowMillis: 3_000)
        }
        let (code, io) = await run(["migrate", "--from", "sqlite:\(source)", "--to", "sqlite:\(target)", "--verify"])
        #expect(code == 0, "\(io.capturedErr)")
        #expect(io.capturedOut.contains("2 toggles"), "\(io.capturedOut)")
        do {
            let store = try SQLiteToggleStore(path: target)
            defer { store.shutdown() }
            let copied = try store.toggles(app: nil)
            #expect(copied.map(\.name) == ["map.style", "new_home"])
            #expect(copied.map(\.value) == [.string("night"), .rollout(percent: 25)])
            #expect(copied.map(\.position.offset) == [1, 2])
            #expect(copied.map(\.updatedAtMillis) == [3_000, 2_000])
            #expect(copied.allSatisfy { $0.position.epoch == store.epoch })
            // A toggle changed in the target only is a difference --verify names.
            _ = try store.setToggle(app: "rider", name: "new_home", value: .bool(false), nowMillis: 4_000)
        }
        let (verify, verifyIO) = await run(["migrate", "--from", "sqlite:\(source)", "--to", "sqlite:\(target)", "--verify-only"])
        #expect(verify == 1)
        #expect(verifyIO.capturedErr.contains("rider/new_home"), "\(verifyIO.capturedErr)")
    }

    @Test("toggles travel SQLite → Redis → SQLite with --verify, and --without-toggles leaves them behind")
    func togglesThroughRedis() async throws {
        let redis = try RedisServer()
        defer { redis.stop() }
        let directory = try TemporaryDirectory()
        let source = "\(directory.path)/source.sqlite"
        let back = "\(directory.path)/back.sqlite"
        let ordersOnly = "\(directory.path)/orders-only.sqlite"
        try populate(source, orders: 3)
        let written: [FeatureToggle]
        do {
            let store = try SQLiteToggleStore(path: source)
            defer { store.shutdown() }
            _ = try store.setToggle(app: "rider", name: "new_home", value: .bool(true), nowMillis: 1_000)
            _ = try store.setToggle(app: "rider", name: "new_home", value: .rollout(percent: 25), nowMillis: 2_000)
            _ = try store.setToggle(app: "driver", name: "map.style", value: .string("night: a/b"), nowMillis: 3_000)
            written = try store.toggles(app: nil)
        }
        let (code, io) = await run(["migrate", "--from", "sqlite:\(source)", "--to", redis.url, "--verify"])
        #expect(code == 0, "\(io.capturedErr)")
        #expect(io.capturedOut.contains("copied 2 toggles"), "\(io.capturedOut)")
        #expect(io.capturedOut.contains("verified 3 orders and 2 toggles: identical"), "\(io.capturedOut)")
        let hash = try ProcessRunner.run(["redis-cli", "-p", String(redis.port), "HLEN", "longlink:toggles"])
        #expect(hash.text.trimmingCharacters(in: .whitespacesAndNewlines) == "2", "\(hash.text)")
        let (again, againIO) = await run(["migrate", "--from", redis.url, "--to", "sqlite:\(back)", "--verify"])
        #expect(again == 0, "\(againIO.capturedErr)")
        do {
            let store = try SQLiteToggleStore(path: back)
            defer { store.shutdown() }
            let copied = try store.toggles(app: nil)
            #expect(copied.map(\.route) == written.map(\.route))
            #expect(copied.map(\.value) == written.map(\.value))
            #expect(copied.map(\.position.offset) == [1, 2])
            #expect(copied.map(\.updatedAtMillis) == [3_000, 2_000])
        }
        let (orders, ordersIO) = await run(["migrate", "--from", "sqlite:\(source)", "--to", "sqlite:\(ordersOnly)", "--verify", "--without-toggles"])
        #expect(orders == 0, "\(ordersIO.capturedErr)")
        #expect(ordersIO.capturedOut.contains("toggles not copied"), "\(ordersIO.capturedOut)")
        let empty = try SQLiteToggleStore(path: ordersOnly)
        defer { empty.shutdown() }
        #expect(try empty.toggles(app: nil).isEmpty)
    }

    @Test("a second run after the source moved on extends the target; real divergence needs --overwrite and names both sides")
    func resumeAfterSourceMovedOn() async throws {
        let directory = try TemporaryDirectory()
        let source = "\(directory.path)/source.sqlite"
        let target = "\(directory.path)/target.sqlite"
        try populate(source)
        let (first, firstIO) = await run(["migrate", "--from", "sqlite:\(source)", "--to", "sqlite:\(target)"])
        #expect(first == 0, "\(firstIO.capturedErr)")
        // The source moves on: o1 gets two more records, a new order appears.
        do {
            let store = try SQLiteOrderStore(path: source)
            defer { store.shutdown() }
            for change in OrderFixtures.taxiLifecycle("o1")[2..<4] { _ = try store.apply(change) }
            _ = try store.apply(OrderFixtures.change("late", BuiltInLines.created))
        }
        let (second, secondIO) = await run(["migrate", "--from", "sqlite:\(source)", "--to", "sqlite:\(target)", "--verify"])
        #expect(second == 0, "\(secondIO.capturedErr)")
        #expect(secondIO.capturedOut.contains("copied 1 orders"), "\(secondIO.capturedOut)")
        #expect(secondIO.capturedOut.contains("extended 1"), "\(secondIO.capturedOut)")
        #expect(secondIO.capturedOut.contains("verified 13 orders"), "\(secondIO.capturedOut)")

        // Real divergence: the target moves o2 on by itself, and o3 differently from the source.
        do {
            let store = try SQLiteOrderStore(path: target)
            defer { store.shutdown() }
            _ = try store.apply(OrderFixtures.taxiLifecycle("o2")[3])
        }
        do {
            let store = try SQLiteOrderStore(path: source)
            defer { store.shutdown() }
            _ = try store.apply(OrderFixtures.taxiLifecycle("o3")[4])
        }
        do {
            let store = try SQLiteOrderStore(path: target)
            defer { store.shutdown() }
            _ = try store.apply(
                OrderFixtures.change("o3", BuiltInLines.cancelled, fields: OrderFields(cancellationReason: "rider"))
            )
        }
        let (refused, refusedIO) = await run(["migrate", "--from", "sqlite:\(source)", "--to", "sqlite:\(target)"])
        #expect(refused == 1)
        let message = refusedIO.capturedErr
        #expect(message.contains("nothing was written") && message.contains("--overwrite"), "\(message)")
        #expect(message.contains("taxi/o2: the target is ahead: target at offset 4 (driver_arriving), source at offset 3 (driver_assigned)"), "\(message)")
        #expect(message.contains("taxi/o3: the copies diverged: source at offset 5 (driver_arrived), target at offset 5 (cancelled)"), "\(message)")
        let (overwrite, overwriteIO) = await run(["migrate", "--from", "sqlite:\(source)", "--to", "sqlite:\(target)", "--overwrite", "--verify"])
        #expect(overwrite == 0, "\(overwriteIO.capturedErr)")
        #expect(overwriteIO.capturedOut.contains("replaced 2"), "\(overwriteIO.capturedOut)")
    }

    @Test("progress lines on stderr show orders done / total and the rate")
    func progress() async throws {
        let directory = try TemporaryDirectory()
        let source = "\(directory.path)/source.sqlite"
        try populate(source)
        let (code, io) = await run([
            "migrate", "--from", "sqlite:\(source)", "--to", "sqlite:\(directory.path)/t.sqlite", "--verify",
            "--progress-interval", "0",
        ])
        #expect(code == 0, "\(io.capturedErr)")
        let lines = io.capturedErr.split(separator: "\n")
        #expect(lines.contains { $0.contains("copy: 12/12 orders") && $0.contains("orders/s") }, "\(io.capturedErr)")
        #expect(lines.contains { $0.contains("verify: 12/12 orders") && $0.contains("orders/s") }, "\(io.capturedErr)")
        #expect(!io.capturedOut.contains("orders/s"), "progress belongs on stderr")
    }

    @Test("a shadow store written by serve is a faithful copy: migrate --verify finds it identical")
    func shadowStoreUnderServe() async throws {
        let directory = try TemporaryDirectory()
        let primary = "\(directory.path)/a.sqlite"
        let shadow = "\(directory.path)/b.sqlite"
        let server = try ServerProcess([
            "--store", "sqlite:\(primary)", "--shadow-store", "sqlite:\(shadow)", "--insecure-dev",
            "--metrics-listen", "off", "--drain-period", "200ms", "--loops", "1",
        ])
        try #require(server.port > 0, "server did not start")
        let address = "127.0.0.1:\(server.port)"
        for state in ["created", "dispatching"] {
            let (code, io) = await run(["publish", "--order", "d1", "--state", state, "--server", address])
            #expect(code == 0, "\(io.capturedErr)")
        }
        // Enough changes that a store applying them with its own clock would cross a millisecond somewhere.
        let (simulated, simulateIO) = await run(["simulate", "--orders", "40", "--rate", "0", "--seed", "5", "--server", address])
        #expect(simulated == 0, "\(simulateIO.capturedErr)")
        #expect(server.terminate() == 0)
        let log = server.log
        #expect(!log.contains("shadow divergence"), "\(log)")
        let (verify, verifyIO) = await run(["migrate", "--from", "sqlite:\(primary)", "--to", "sqlite:\(shadow)", "--verify-only"])
        #expect(verify == 0, "\(verifyIO.capturedErr)")
        #expect(verifyIO.capturedOut.contains("verified 41 orders"), "\(verifyIO.capturedOut)")
    }
}
