import LonglinkBench
import LonglinkCore
import LonglinkTestSupport
import Testing

@Suite("Store benchmark", .ownThreads)
struct StoreBenchmarkTests {
    @Test("the benchmark applies whole legal lifecycles: its counts are what the store holds afterwards")
    func benchmark() throws {
        let store = MemoryOrderStore()
        let figures = StoreBenchmark.run(store: store, changes: 2_000, batchSize: 64, warmUp: false)
        #expect(figures.changes == 2_000 && figures.refused == 0 && figures.orders == 250)
        #expect(figures.batches == 32)
        let held = try store.orders(after: nil, limit: 10_000)
        #expect(held.count == figures.orders, "one order per reported lifecycle")
        #expect(held.allSatisfy { $0.state == BuiltInLines.paid }, "every lifecycle ran to its end")
        let first = try #require(held.first)
        let read = try store.records(of: first.line, first.orderID, after: StreamPosition(epoch: first.position.epoch, offset: 0), limit: 100)
        guard case .records(let history) = read else {
            Issue.record("the first order's history: \(read)")
            return
        }
        #expect(history.count * figures.orders == figures.changes, "each order took its share of the changes")
    }

    @Test("the warm-up runs against the same store before the measured run, and is not counted")
    func warmUp() throws {
        let store = MemoryOrderStore()
        let figures = StoreBenchmark.run(store: store, changes: 800, batchSize: 64)
        #expect(figures.changes == 800 && figures.orders == 100 && figures.refused == 0)
        #expect(try store.orders(after: nil, limit: 10_000).count == 100 + 25, "the warm-up's 200 changes made 25 orders")
    }
}
