public import LonglinkCore

/// Measures how fast a store applies changes: `longlink bench store` calls `run`.
///
/// The workload is realistic: full taxi lifecycles (created … paid, 8 changes with driver ids, ETAs, locations
/// and a small payload), 1,024 orders in flight at a time with their steps interleaved, applied in batches of
/// `batchSize` through `applyBatch` (one transaction each, like the Store's group commit). Only `applyBatch`
/// is timed; building the changes is not. A same-run baseline (one dictionary upsert per change, same keys)
/// makes the figure comparable across machines (`ratioToBaseline`). An untimed warm-up pass of a quarter of the
/// changes (other orders, same store) goes first: a process's first pass pays for page faults and heap growth,
/// which is start-up, not the steady state a gateway runs in.
public enum StoreBenchmark {
    /// The figures of one run.
    public struct Figures: Hashable, Sendable, CustomStringConvertible {
        /// Changes applied (accepted or refused).
        public var changes: Int
        /// Changes refused (should be 0: the workload is legal).
        public var refused: Int
        /// Orders created.
        public var orders: Int
        /// `applyBatch` calls.
        public var batches: Int
        /// Time spent in `applyBatch`, in seconds.
        public var seconds: Double
        /// Seconds the same-run baseline took: one `[OrderID: Int]` upsert per change, same ids, same order.
        public var baselineSeconds: Double
        /// Throughput.
        public var changesPerSecond: Double { seconds > 0 ? Double(changes) / seconds : 0 }
        /// Baseline throughput (dictionary upserts per second) on this machine, in this run.
        public var baselinePerSecond: Double { baselineSeconds > 0 ? Double(changes) / baselineSeconds : 0 }
        /// `changesPerSecond / baselinePerSecond`: comparable across machines.
        public var ratioToBaseline: Double { baselinePerSecond > 0 ? changesPerSecond / baselinePerSecond : 0 }

        public var description: String {
            let rate = Int(changesPerSecond.rounded())
            let baseline = Int(baselinePerSecond.rounded())
            let ratio = (ratioToBaseline * 1000).rounded() / 1000
            return "\(changes) changes (\(orders) orders, \(batches) batches, \(refused) refused) in \(seconds) s: "
                + "\(rate) changes/s; baseline \(baseline) dictionary upserts/s; ratio \(ratio)"
        }
    }

    /// Orders whose lifecycles are interleaved.
    public static let ordersInFlight = 1_024

    /// Applies `changes` changes (rounded up to whole lifecycles of 8) to `store` in batches of `batchSize`.
    /// Order ids are `bench-<run>-<n>` with a random run tag, so runs against a durable store do not collide.
    public static func run(store: any OrderStore, changes: Int, batchSize: Int, warmUp: Bool = true) -> Figures {
        if warmUp { _ = run(store: store, changes: max(8, changes / 4), batchSize: batchSize, warmUp: false) }
        let batchSize = max(1, batchSize)
        let steps = 8
        let orders = max(1, (changes + steps - 1) / steps)
        let tag = String(UInt32.random(in: 0...UInt32.max), radix: 36)
        var figures = Figures(changes: 0, refused: 0, orders: orders, batches: 0, seconds: 0, baselineSeconds: 0)
        var baseline: [OrderID: Int] = [:]
        var baselineElapsed: UInt64 = 0
        var elapsed: UInt64 = 0
        var firstOrder = 0
        while firstOrder < orders {
            let group = min(ordersInFlight, orders - firstOrder)
            let ids = (0..<group).map { OrderID("bench-\(tag)-\(firstOrder + $0)")! }
            var pending: [OrderChange] = []
            pending.reserveCapacity(group * steps)
            for step in 0..<steps {
                for (n, id) in ids.enumerated() { pending.append(change(id, step: step, n: n)) }
            }
            var start = 0
            while start < pending.count {
                let end = min(pending.count, start + batchSize)
                let batch = Array(pending[start..<end])
                var began = MonotonicClock.nanoseconds()
                for change in batch { baseline[change.orderID, default: 0] += 1 }
                baselineElapsed += MonotonicClock.nanoseconds() - began
                began = MonotonicClock.nanoseconds()
                let results = store.applyBatch(batch)
                elapsed += MonotonicClock.nanoseconds() - began
                figures.batches += 1
                figures.changes += batch.count
                for result in results { if case .failure = result { figures.refused += 1 } }
                start = end
            }
            firstOrder += group
        }
        figures.seconds = Double(elapsed) / 1e9
        figures.baselineSeconds = Double(baselineElapsed) / 1e9
        return figures
    }

    private static let states: [OrderState] = [
        BuiltInLines.created, BuiltInLines.dispatching, BuiltInLines.driverAssigned, BuiltInLines.driverArriving,
        BuiltInLines.driverArrived, BuiltInLines.inTrip, BuiltInLines.completed, BuiltInLines.paid,
    ]
    private static let drivers = (0..<64).map { "driver-\($0)" }
    private static let payload: [UInt8] = Array("{\"fare\":2350,\"currency\":\"CNY\"}".utf8)

    private static func change(_ id: OrderID, step: Int, n: Int) -> OrderChange {
        var fields = OrderFields.none
        switch step {
        case 0: fields.location = GeoPoint(latitudeE6: 31_230_416 + Int32(n), longitudeE6: 121_473_701)
        case 2: fields = OrderFields(driverID: drivers[n % drivers.count], etaSeconds: 300)
        case 3:
            fields = OrderFields(etaSeconds: 120, location: GeoPoint(latitudeE6: 31_231_000, longitudeE6: 121_474_000))
        case 4: fields.etaSeconds = 0
        case 7: fields.payload = payload
        default: break
        }
        return OrderChange(orderID: id, line: .taxi, targetState: states[step], fields: fields)
    }
}
