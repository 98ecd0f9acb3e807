import Glibc
import LonglinkCore
import LonglinkStores
import LonglinkTestSupport
import Synchronization
import Testing

/// What batch requests saw: each completion's results and the thread it ran on.
private final class BatchResults: Sendable {
    let batches = Mutex<[[Result<AppliedChange, StoreError>]]>([])
    let threads = Mutex<Set<UInt>>([])

    var count: Int { batches.withLock { $0.count } }

    func note(_ results: [Result<AppliedChange, StoreError>]) {
        batches.withLock { $0.append(results) }
        threads.withLock { _ = $0.insert(UInt(pthread_self())) }
    }

    func wait(for expected: Int) {
        let deadline = ContinuousClock.now + .seconds(10)
        while count < expected && ContinuousClock.now < deadline { usleep(1_000) }
    }
}

@Suite("StoreWriter batches (the gateway loop's publish path)", .ownThreads)
struct StoreWriterBatchTests {
    @Test("applyOnCaller commits on the calling thread, after what was queued before, and returns results in order")
    func appliesOnCaller() throws {
        let counters = SpyCounters()
        let committed = Mutex<[UInt64]>([])
        let writer = try StoreWriter(
            configuration: .init(
                expiryIntervalMillis: 0,
                committed: BrokerHandOff { records in committed.withLock { $0 += records.map(\.position.offset) } },
                commitsOnCaller: true
            )
        ) { SpyOrderStore(MemoryOrderStore(), counters: counters) }
        defer { writer.shutdown() }
        let lifecycle = OrderFixtures.taxiLifecycle("c1")
        // The first change waits in the queue; the batch must commit after it.
        let first = Mutex<Result<AppliedChange, StoreError>?>(nil)
        writer.apply(lifecycle[0], deferred: true) { result in first.withLock { $0 = result } }
        var results: [Result<AppliedChange, StoreError>] = []
        let batch = Array(lifecycle[1...]) + [OrderChange(orderID: OrderID("c1")!, line: .taxi, targetState: BuiltInLines.created)]
        #expect(writer.applyOnCaller(batch, appendingTo: &results))
        #expect(try first.withLock { $0 }?.get().record.position.offset == 1)
        #expect(results.count == batch.count)
        let offsets = results.dropLast().map { try? $0.get().record.position.offset }
        #expect(offsets == (2...UInt64(lifecycle.count)).map { Optional($0) })
        // The last change is illegal (back to `created`): refused, nothing stored for it.
        #expect(throws: StoreError.self) { try results.last!.get() }
        #expect(committed.withLock { $0 } == Array(1...UInt64(lifecycle.count)))
        #expect(writer.statistics.changes == lifecycle.count + 1)
        #expect(counters.batchSizes == [1, batch.count])
    }

    @Test("applyOnCaller refuses (applying nothing) without commitsOnCaller and for a batch above the caller limit")
    func refusesWhenTheWriterMustCommit() throws {
        let plain = try StoreWriter(configuration: .init(expiryIntervalMillis: 0)) { MemoryOrderStore() }
        defer { plain.shutdown() }
        var results: [Result<AppliedChange, StoreError>] = []
        #expect(!plain.applyOnCaller([OrderFixtures.change("p1", BuiltInLines.created)], appendingTo: &results))
        #expect(results.isEmpty)
        #expect(plain.statistics.changes == 0)

        let caller = try StoreWriter(configuration: .init(expiryIntervalMillis: 0, commitsOnCaller: true)) { MemoryOrderStore() }
        defer { caller.shutdown() }
        let big = (0...StoreWriter.callerBatchLimit).map { OrderFixtures.change("big\($0)", BuiltInLines.created) }
        #expect(!caller.applyOnCaller(big, appendingTo: &results))
        #expect(results.isEmpty)
        #expect(caller.statistics.changes == 0)
    }

    @Test("a batch request gets its results together, in order, between the requests queued around it")
    func batchRequest() throws {
        let writer = try StoreWriter(configuration: .init(expiryIntervalMillis: 0)) { MemoryOrderStore() }
        defer { writer.shutdown() }
        let seen = BatchResults()
        let single = Mutex<[UInt64]>([])
        let lifecycle = OrderFixtures.taxiLifecycle("b1")
        writer.apply(lifecycle[0], deferred: true) { result in single.withLock { $0.append((try? result.get().record.position.offset) ?? 0) } }
        writer.apply(contentsOf: Array(lifecycle[1..<3]), deferred: true) { seen.note($0) }
        writer.apply(lifecycle[3], deferred: true) { result in single.withLock { $0.append((try? result.get().record.position.offset) ?? 0) } }
        writer.commitQueued()
        seen.wait(for: 1)
        let deadline = ContinuousClock.now + .seconds(10)
        while single.withLock({ $0.count }) < 2 && ContinuousClock.now < deadline { usleep(1_000) }
        #expect(single.withLock { $0 } == [1, 4])
        let batch = seen.batches.withLock { $0 }
        #expect(batch.count == 1)
        #expect(batch.first?.map { try? $0.get().record.position.offset } == [2, 3])
        #expect(!seen.threads.withLock { $0 }.contains(UInt(pthread_self())))
    }

    @Test("a batch request after shutdown fails every change with closed")
    func afterShutdown() throws {
        let writer = try StoreWriter(configuration: .init(expiryIntervalMillis: 0)) { MemoryOrderStore() }
        writer.shutdown()
        let seen = BatchResults()
        writer.apply(contentsOf: [OrderFixtures.change("s1", BuiltInLines.created), OrderFixtures.change("s2", BuiltInLines.created)]) {
            seen.note($0)
        }
        seen.wait(for: 1)
        let results = seen.batches.withLock { $0 }.first ?? []
        #expect(results.count == 2)
        for result in results {
            #expect(throws: StoreError.closed) { try result.get() }
        }
    }
}
