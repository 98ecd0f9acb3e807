import LonglinkBench
import LonglinkTestSupport
import Testing

@Suite("LatencyHistogram", .ownThreads)
struct LatencyHistogramTests {
    @Test("small values are exact: percentiles of 1…100")
    func exactSmallValues() {
        var histogram = LatencyHistogram()
        for value in UInt64(1)...100 { histogram.record(value) }
        #expect(histogram.count == 100)
        #expect(histogram.minimum == 1)
        #expect(histogram.maximum == 100)
        #expect(histogram.value(atPercentile: 50) == 50)
        #expect(histogram.value(atPercentile: 90) == 90)
        #expect(histogram.value(atPercentile: 99) == 99)
        #expect(histogram.value(atPercentile: 100) == 100)
        #expect(histogram.value(atPercentile: 0) == 1)
        #expect(histogram.mean == 50.5)
    }

    @Test("large values are within 1/64 above the true percentile")
    func relativeError() {
        var histogram = LatencyHistogram()
        // 1 µs … 100 ms in 1 µs steps: the k-th percentile is k × 1,000 µs.
        for micros in UInt64(1)...100_000 { histogram.record(micros * 1_000) }
        for percentile in [50.0, 90, 99, 99.9] {
            let truth = UInt64(percentile * 1_000) * 1_000
            let reported = histogram.value(atPercentile: percentile)
            #expect(reported >= truth, "p\(percentile): \(reported) < \(truth)")
            #expect(Double(reported) <= Double(truth) * (1 + 1.0 / 64), "p\(percentile): \(reported) vs \(truth)")
        }
        #expect(histogram.value(atPercentile: 100) == 100_000_000)
    }

    @Test("a skewed distribution: 990 fast samples and 10 slow ones put p99 on the fast side, p99.9 on the slow")
    func skewed() {
        var histogram = LatencyHistogram()
        for _ in 0..<990 { histogram.record(200_000) }  // 0.2 ms
        for _ in 0..<10 { histogram.record(50_000_000) }  // 50 ms
        #expect(histogram.value(atPercentile: 99) <= 200_000 + 200_000 / 64)
        #expect(histogram.value(atPercentile: 99.9) >= 50_000_000)
        #expect(histogram.value(atPercentile: 99.9) == histogram.maximum)
    }

    @Test("merging equals recording everything in one histogram; buckets rebuild it")
    func mergeAndRebuild() {
        var a = LatencyHistogram()
        var b = LatencyHistogram()
        var all = LatencyHistogram()
        for value in stride(from: UInt64(5), to: 5_000_000, by: 7_919) {
            if value % 2 == 0 { a.record(value) } else { b.record(value) }
            all.record(value)
        }
        a.merge(b)
        #expect(a == all)
        let rebuilt = LatencyHistogram(buckets: all.buckets, minimum: all.minimum, maximum: all.maximum, sum: all.sum)
        #expect(rebuilt == all)
        a.reset()
        #expect(a.count == 0 && a.value(atPercentile: 99) == 0)
    }

    @Test("the summary carries the usual percentiles")
    func summary() {
        var histogram = LatencyHistogram()
        for value in UInt64(1)...1_000 { histogram.record(value) }
        let summary = LatencySummary(histogram)
        #expect(summary.count == 1_000)
        #expect(summary.min == 1 && summary.max == 1_000)
        #expect(summary.p50 <= summary.p90 && summary.p90 <= summary.p99 && summary.p99 <= summary.p999)
        #expect(summary.p50 >= 500 && Double(summary.p50) <= 500 * (1 + 1.0 / 64))
    }

    @Test("payload stamps round-trip and pad to the requested size")
    func payload() {
        let bytes = BenchPayload.make(size: 100, timestamp: 123_456_789, sequence: 42)
        #expect(bytes.count == 100)
        let stamp = BenchPayload.read(bytes)
        #expect(stamp?.timestamp == 123_456_789)
        #expect(stamp?.sequence == 42)
        #expect(BenchPayload.make(size: 3, timestamp: 1, sequence: 1).count == BenchPayload.minimumSize)
        #expect(BenchPayload.read([1, 2, 3]) == nil)
    }
}
