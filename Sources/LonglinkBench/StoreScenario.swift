import Foundation
import LonglinkCore
import LonglinkRedis
import LonglinkSQLite
import LonglinkStores
import Synchronization

/// `longlink bench store`: how fast each store applies changes, in process. Three runs: the memory store (measured
/// on a fresh store after a cold pass of the same size on another, whose figure is reported too) and the
/// SQLite store through `StoreBenchmark` (batches of 4,096 changes per `applyBatch`, one transaction each), and
/// the SQLite store behind the `StoreWriter` (the gateway's path): every change submitted with a completion, the
/// writer grouping whatever is queued into one commit, and a change counted when its completion reports it
/// durable ("acknowledged").
enum StoreScenario {
    static let batchSize = 4_096

    static func run(_ parameters: BenchParameters, control: BenchControl) -> [BenchRun] {
        let changes = parameters.messages
        var runs: [BenchRun] = []
        control.progress("store: memory, \(changes) changes")
        // The process's first pass pays for page faults and heap growth (start-up, not the steady state): it runs
        // on a throwaway store and is reported as the cold figure; the measured pass runs on a fresh store.
        let cold = StoreBenchmark.run(store: MemoryOrderStore(), changes: changes, batchSize: batchSize, warmUp: false)
        let memory = StoreBenchmark.run(store: MemoryOrderStore(), changes: changes, batchSize: batchSize, warmUp: false)
        var memoryRun = run(system: "memory", label: "applyBatch × \(batchSize), after a cold pass", memory)
        memoryRun.figures.append(Figure("cold_pass_changes_per_second", cold.changesPerSecond, "/s"))
        runs.append(memoryRun)
        guard !control.isInterrupted else { return runs }

        let directory = BenchServers.temporaryPath("longlink-bench-store", "d")
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        control.progress("store: sqlite, \(changes) changes")
        do {
            let store = try SQLiteOrderStore(path: "\(directory)/direct.sqlite")
            let figures = StoreBenchmark.run(store: store, changes: changes, batchSize: batchSize)
            store.shutdown()
            runs.append(run(system: "sqlite", label: "applyBatch × \(batchSize), synchronous=NORMAL (WAL)", figures))
        } catch {
            var failed = BenchRun(system: "sqlite", label: "applyBatch")
            failed.failures["\(error)"] = 1
            runs.append(failed)
        }
        guard !control.isInterrupted else { return runs }
        control.progress("store: sqlite behind the StoreWriter, \(changes) changes")
        runs.append(writerRun(path: "\(directory)/writer.sqlite", changes: changes, control: control))
        if let url = parameters.storeURL {
            for durability in [RedisDurability.master, RedisDurability(replicas: 1, timeout: .seconds(1))] where !control.isInterrupted {
                control.progress("store: \(url) behind the StoreWriter, acknowledged \(durability), \(changes) changes")
                let prefix = "bench-\(String(UInt32.random(in: 0...UInt32.max), radix: 36))"
                runs.append(
                    writerRun(
                        system: url.hasPrefix(RedisClusterAddress.scheme) ? "redis-cluster-writer" : "redis-writer",
                        label: "StoreWriter on \(url), acknowledged \(durability)",
                        changes: changes,
                        control: control
                    ) { () throws(StoreError) -> any OrderStore in
                        if let cluster = RedisClusterAddress(url: url) {
                            return try RedisOrderStore(cluster: cluster, prefix: prefix, durability: durability)
                        }
                        return try RedisOrderStore(address: RedisAddress(url: url)!, prefix: prefix, durability: durability)
                    }
                )
            }
        }
        return runs
    }

    private static func run(system: String, label: String, _ figures: StoreBenchmark.Figures) -> BenchRun {
        BenchRun(
            system: system,
            label: label,
            figures: [
                Figure("changes", Double(figures.changes)),
                Figure("refused", Double(figures.refused)),
                Figure("seconds", figures.seconds, "s"),
                Figure("changes_per_second", figures.changesPerSecond, "/s"),
                Figure("baseline_upserts_per_second", figures.baselinePerSecond, "/s"),
                Figure("ratio_to_baseline", figures.ratioToBaseline),
            ]
        )
    }

    /// Submits `changes` changes to a `StoreWriter` over SQLite and times them until the last is acknowledged.
    static func writerRun(path: String, changes: Int, control: BenchControl) -> BenchRun {
        writerRun(system: "sqlite-writer", label: "StoreWriter group commit, acknowledged", changes: changes, control: control) {
            () throws(StoreError) -> any OrderStore in try SQLiteOrderStore(path: path)
        }
    }

    /// Submits `changes` changes to a `StoreWriter` over the store `makeStore` opens and times them until the last
    /// is acknowledged.
    static func writerRun(
        system: String,
        label: String,
        changes: Int,
        control: BenchControl,
        makeStore: @escaping @Sendable () throws(StoreError) -> any OrderStore
    ) -> BenchRun {
        var result = BenchRun(system: system, label: label)
        let writer: StoreWriter
        do {
            writer = try StoreWriter(makeStore: makeStore)
        } catch {
            result.failures["\(error)"] = 1
            return result
        }
        defer { writer.shutdown() }
        let acknowledged = Atomic<Int>(0)
        let refused = Atomic<Int>(0)
        let workload = Lifecycles(orders: max(1, (changes + 7) / 8))
        let start = MonotonicClock.nanoseconds()
        var submitted = 0
        for change in workload.changes(limit: changes) {
            // Keep at most 64 Ki changes queued: a real gateway's queue is bounded by its connections.
            if submitted - acknowledged.value - refused.value > 65_536 {
                control.wait(timeout: .seconds(30), interval: .microseconds(200)) {
                    submitted - acknowledged.value - refused.value <= 32_768
                }
            }
            writer.apply(change) { outcome in
                if case .success = outcome { acknowledged.add(1) } else { refused.add(1) }
            }
            submitted += 1
            if control.isInterrupted { break }
        }
        control.wait(timeout: .seconds(60), interval: .milliseconds(1), honourInterrupt: false) {
            acknowledged.value + refused.value >= submitted
        }
        let elapsed = seconds(from: start, to: MonotonicClock.nanoseconds())
        let statistics = writer.statistics
        result.figures = [
            Figure("changes", Double(submitted)),
            Figure("acknowledged", Double(acknowledged.value)),
            Figure("refused", Double(refused.value)),
            Figure("seconds", elapsed, "s"),
            Figure("acknowledged_per_second", elapsed > 0 ? Double(acknowledged.value) / elapsed : 0, "/s"),
            Figure("commits", Double(statistics.batches)),
            Figure("changes_per_commit", statistics.batches > 0 ? Double(statistics.changes) / Double(statistics.batches) : 0),
        ]
        return result
    }
}

/// Taxi lifecycles (created … paid, 8 changes with driver ids, ETAs and locations), 1,024 orders interleaved.
struct Lifecycles {
    let orders: Int
    let tag = String(UInt32.random(in: 0...UInt32.max), radix: 36)

    static let states: [OrderState] = [
        BuiltInLines.created, BuiltInLines.dispatching, BuiltInLines.driverAssigned, BuiltInLines.driverArriving,
        BuiltInLines.driverArrived, BuiltInLines.inTrip, BuiltInLines.completed, BuiltInLines.paid,
    ]

    /// Step `step` (0–7) of order `id`, with the fields a real app would send.
    static func change(_ id: OrderID, step: Int, n: Int, payload: [UInt8] = []) -> OrderChange {
        var fields = OrderFields(payload: payload)
        switch step {
        case 0: fields.location = GeoPoint(latitudeE6: 31_230_416 + Int32(n % 1000), longitudeE6: 121_473_701)
        case 2:
            fields.driverID = "driver-\(n % 512)"
            fields.etaSeconds = 300
        case 3:
            fields.etaSeconds = 120
            fields.location = GeoPoint(latitudeE6: 31_231_000, longitudeE6: 121_474_000)
        case 4: fields.etaSeconds = 0
        default: break
        }
        return OrderChange(orderID: id, line: .taxi, targetState: states[step], fields: fields)
    }

    /// Up to `limit` changes: groups of 1,024 orders, each group stepping through the lifecycle together.
    func changes(limit: Int) -> [OrderChange] {
        var result: [OrderChange] = []
        result.reserveCapacity(limit)
        var first = 0
        while first < orders && result.count < limit {
            let group = min(1_024, orders - first)
            let ids = (0..<group).map { OrderID("s\(tag)-\(first + $0)")! }
            for step in 0..<8 {
                for (n, id) in ids.enumerated() where result.count < limit {
                    result.append(Self.change(id, step: step, n: first + n))
                }
            }
            first += group
        }
        return result
    }
}
