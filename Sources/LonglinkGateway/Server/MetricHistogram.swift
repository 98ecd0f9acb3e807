import Synchronization

/// A Prometheus histogram with fixed buckets, updated with relaxed atomics from any thread (three atomic adds
/// per observation, no lock). Values are integers in a base unit (nanoseconds, bytes); `scale` turns them into
/// the exported unit (seconds: 1e-9).
///
/// The bounds and the bucket counters are stored inline in the object (at most `maxBounds` bounds): the
/// histograms are shared by every loop and observed on every iteration and commit, and reading arrays of them
/// (or of counter objects) retained and released each array and counter per observation, on cache lines every
/// loop touches.
public final class MetricHistogram: Sendable {
    /// The inline storage of the bounds (the size is the most bounds a histogram has).
    private typealias Limits = InlineArray<24, UInt64>
    /// The inline storage of the counters: one per bound, then `+Inf`'s.
    private typealias Counters = InlineArray<25, Atomic<Int>>
    /// The most bounds a histogram has.
    public static let maxBounds = Limits.count
    /// Upper bounds of the buckets in the base unit, ascending (the `+Inf` bucket is implicit).
    public let bounds: [UInt64]
    /// Multiplier from the base unit to the exported unit.
    public let scale: Double
    /// `bounds`, then `UInt64.max` (the `+Inf` bucket's bound, and the padding).
    private let limits: Limits
    /// One counter per bound, then the `+Inf` bucket's.
    private let buckets: Counters
    private let sum = Atomic<UInt64>(0)
    private let total = Atomic<Int>(0)

    /// Creates an empty histogram.
    public init(bounds: [UInt64], scale: Double = 1) {
        precondition(bounds == bounds.sorted(), "histogram bounds must ascend")
        precondition(bounds.count <= Self.maxBounds, "a histogram has at most \(Self.maxBounds) bounds")
        assert(Counters.count == Limits.count + 1, "one counter per bound, and +Inf's")
        self.bounds = bounds
        self.scale = scale
        self.limits = Limits { index in index < bounds.count ? bounds[index] : UInt64.max }
        self.buckets = Counters { _ in Atomic<Int>(0) }
    }

    /// Records one value.
    public func observe(_ value: UInt64) {
        observe(value, count: 1)
    }

    /// Records `count` observations of the same value (a batch of publishes committed together) with one update
    /// of each atomic.
    public func observe(_ value: UInt64, count: Int) {
        guard count > 0 else { return }
        // The first bound at or above the value; a value above every bound stops at the padding (`+Inf`).
        var index = 0
        while index < Self.maxBounds && value > limits[index] { index += 1 }
        buckets[index].add(count, ordering: .relaxed)
        sum.add(value &* UInt64(count), ordering: .relaxed)
        total.add(count, ordering: .relaxed)
    }

    /// A copy: cumulative counts per bound (then `+Inf`), the sum in the exported unit and the count.
    public var snapshot: (cumulative: [Int], sum: Double, count: Int) {
        var running = 0
        var cumulative: [Int] = []
        // The bounds' buckets, then `+Inf`, which also holds what the padding's buckets would (none: a value above
        // every bound stops at the first padding bucket, index `bounds.count`).
        for index in 0...bounds.count {
            running += buckets[index].load(ordering: .relaxed)
            cumulative.append(running)
        }
        return (cumulative, Double(sum.load(ordering: .relaxed)) * scale, cumulative.last ?? 0)
    }

    /// Latency buckets from 50 µs to 10 s, in nanoseconds.
    public static func latency() -> MetricHistogram {
        let seconds: [Double] = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
        return MetricHistogram(bounds: seconds.map { UInt64($0 * 1e9) }, scale: 1e-9)
    }

    /// Size buckets from 0 bytes to 16 MiB.
    public static func bytes() -> MetricHistogram {
        MetricHistogram(bounds: [0, 256, 1_024, 4_096, 16_384, 65_536, 262_144, 1 << 20, 4 << 20, 16 << 20])
    }
}

