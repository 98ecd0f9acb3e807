import LonglinkBench
import LonglinkCore
import Testing

@Suite("Store benchmark")
struct StoreBenchmarkTests {
    @Test("the benchmark applies whole legal lifecycles and reports a rate")
    func benchmark() {
        let figures = StoreBenchmark.run(store: MemoryOrderStore(), changes: 2_000, batchSize: 64)
        #expect(figures.changes == 2_000 && figures.refused == 0 && figures.orders == 250)
        #expect(figures.batches == 32)
        #expect(figures.changesPerSecond > 0)
    }
}
