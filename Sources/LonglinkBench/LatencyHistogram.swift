/// A latency histogram with logarithmic buckets (HDR-style): values (nanoseconds) below 128 are counted
/// exactly; above, each power of two is split into 64 buckets, so any recorded value is known within 1/64
/// (1.6 %) of itself. Recording is two shifts and an increment, there is no per-sample storage, and histograms
/// from several loops or processes merge by adding counts.
///
/// Percentiles report the highest value of the bucket holding the percentile (HDR's "highest equivalent value"),
/// never below the exact minimum nor above the exact maximum.
public struct LatencyHistogram: Sendable, Hashable {
    /// Sub-buckets per power of two above 128.
    static let subBuckets = 64
    /// Bucket count: 128 exact values, then 64 buckets for each of the 57 powers of two from 2^7 to 2^63.
    static let bucketCount = 128 + 57 * 64

    private(set) var counts: [UInt64]
    /// Values recorded.
    public private(set) var count: UInt64 = 0
    /// The smallest value recorded (0 when empty).
    public private(set) var minimum: UInt64 = 0
    /// The largest value recorded (0 when empty).
    public private(set) var maximum: UInt64 = 0
    /// The sum of the values recorded (for the mean).
    public private(set) var sum: Double = 0

    /// An empty histogram.
    public init() {
        counts = Array(repeating: 0, count: Self.bucketCount)
    }

    /// Records one value.
    public mutating func record(_ value: UInt64) {
        counts[Self.index(of: value)] &+= 1
        if count == 0 || value < minimum { minimum = value }
        if value > maximum { maximum = value }
        count &+= 1
        sum += Double(value)
    }

    /// Adds every value of `other`.
    public mutating func merge(_ other: LatencyHistogram) {
        guard other.count > 0 else { return }
        for index in other.counts.indices where other.counts[index] != 0 { counts[index] &+= other.counts[index] }
        if count == 0 || other.minimum < minimum { minimum = other.minimum }
        maximum = Swift.max(maximum, other.maximum)
        count &+= other.count
        sum += other.sum
    }

    /// Forgets every value (keeps the storage).
    public mutating func reset() {
        guard count > 0 else { return }
        for index in counts.indices { counts[index] = 0 }
        count = 0
        minimum = 0
        maximum = 0
        sum = 0
    }

    /// The mean of the values recorded (0 when empty).
    public var mean: Double { count == 0 ? 0 : sum / Double(count) }

    /// The value at `percentile` (0–100): the highest value of the bucket where the cumulative count reaches
    /// `percentile` % of all values, clamped to the exact minimum and maximum. 0 when empty.
    public func value(atPercentile percentile: Double) -> UInt64 {
        guard count > 0 else { return 0 }
        let fraction = Swift.min(Swift.max(percentile, 0), 100) / 100
        let target = Swift.max(1, UInt64((fraction * Double(count)).rounded(.up)))
        var cumulative: UInt64 = 0
        for index in counts.indices where counts[index] != 0 {
            cumulative &+= counts[index]
            if cumulative >= target {
                return Swift.min(Swift.max(Self.highestValue(inBucket: index), minimum), maximum)
            }
        }
        return maximum
    }

    /// The bucket of `value`.
    static func index(of value: UInt64) -> Int {
        if value < 128 { return Int(value) }
        let shift = (63 - value.leadingZeroBitCount) - 6  // ≥ 1: keeps the top 7 bits, 64...127
        return shift * subBuckets + Int(value >> UInt64(shift))
    }

    /// The smallest value counted in bucket `index`.
    static func lowestValue(inBucket index: Int) -> UInt64 {
        if index < 128 { return UInt64(index) }
        let shift = index / subBuckets - 1
        return UInt64(subBuckets + index % subBuckets) << UInt64(shift)
    }

    /// The largest value counted in bucket `index`.
    static func highestValue(inBucket index: Int) -> UInt64 {
        if index < 128 { return UInt64(index) }
        let shift = index / subBuckets - 1
        let next = UInt64(subBuckets + index % subBuckets + 1) << UInt64(shift)
        return next &- 1
    }

    /// Non-empty buckets as `(lowest value, count)` pairs, ascending: what charts and JSON carry.
    public var buckets: [(value: UInt64, count: UInt64)] {
        counts.indices.compactMap { index in
            counts[index] == 0 ? nil : (Self.lowestValue(inBucket: index), counts[index])
        }
    }

    /// Rebuilds a histogram from `buckets` (as written by a worker process) and its exact extremes and sum.
    public init(buckets: [(value: UInt64, count: UInt64)], minimum: UInt64, maximum: UInt64, sum: Double) {
        self.init()
        for bucket in buckets {
            counts[Self.index(of: bucket.value)] &+= bucket.count
            count &+= bucket.count
        }
        if count > 0 {
            self.minimum = minimum
            self.maximum = maximum
            self.sum = sum
        }
    }
}

/// The usual latency summary of a histogram, in nanoseconds.
public struct LatencySummary: Sendable, Hashable, Codable {
    /// Samples.
    public var count: UInt64
    /// Smallest.
    public var min: UInt64
    /// Mean.
    public var mean: Double
    /// Median.
    public var p50: UInt64
    /// 90th percentile.
    public var p90: UInt64
    /// 99th percentile.
    public var p99: UInt64
    /// 99.9th percentile.
    public var p999: UInt64
    /// Largest.
    public var max: UInt64

    /// Summarises `histogram`.
    public init(_ histogram: LatencyHistogram) {
        count = histogram.count
        min = histogram.minimum
        mean = histogram.mean
        p50 = histogram.value(atPercentile: 50)
        p90 = histogram.value(atPercentile: 90)
        p99 = histogram.value(atPercentile: 99)
        p999 = histogram.value(atPercentile: 99.9)
        max = histogram.maximum
    }
}
