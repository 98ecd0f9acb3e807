@testable import LonglinkGateway
import LonglinkTestSupport
import Testing

/// The histogram's buckets are stored inline (bounds padded up to `maxBounds`): a value goes to the first bucket
/// whose bound is at or above it, a value above every bound to `+Inf`, whatever the number of bounds.
@Suite("Metric histogram", .ownThreads)
struct MetricHistogramTests {
    @Test("a value is counted in the first bucket whose bound holds it; above every bound is +Inf")
    func bucketPlacement() {
        let histogram = MetricHistogram(bounds: [10, 100, 1_000])
        histogram.observe(0)
        histogram.observe(10)  // on the bound: that bucket
        histogram.observe(11)
        histogram.observe(1_000)
        histogram.observe(1_001, count: 3)
        histogram.observe(1 << 50)
        histogram.observe(5, count: 0)  // no observation
        let snapshot = histogram.snapshot
        // Cumulative: ≤10: 2, ≤100: 3, ≤1000: 4, +Inf: 8.
        #expect(snapshot.cumulative == [2, 3, 4, 8])
        #expect(snapshot.count == 8)
        let observed: [UInt64] = [0, 10, 11, 1_000, 1_001, 1_001, 1_001, 1 << 50]
        #expect(snapshot.sum == Double(observed.reduce(0, +)))
    }

    @Test("the largest number of bounds keeps +Inf apart from the last bound's bucket")
    func fullHistogram() {
        let bounds = (1...UInt64(MetricHistogram.maxBounds)).map { $0 * 10 }
        let histogram = MetricHistogram(bounds: bounds, scale: 0.5)
        for bound in bounds { histogram.observe(bound) }
        histogram.observe(bounds.last! + 1, count: 2)
        let snapshot = histogram.snapshot
        #expect(snapshot.cumulative.count == bounds.count + 1)
        #expect(snapshot.cumulative == Array(1...bounds.count) + [bounds.count + 2])
        let total: UInt64 = bounds.reduce(0, +) + 2 * (bounds.last! + 1)
        #expect(snapshot.sum == Double(total) * 0.5)
    }

    @Test("the latency and size histograms fit the inline buckets")
    func builtInHistograms() {
        #expect(MetricHistogram.latency().bounds.count <= MetricHistogram.maxBounds)
        #expect(MetricHistogram.bytes().bounds.count <= MetricHistogram.maxBounds)
        let latency = MetricHistogram.latency()
        latency.observe(60_000)  // 60 µs: the 100 µs bucket
        #expect(latency.snapshot.cumulative.prefix(3) == [0, 1, 1])
    }
}
