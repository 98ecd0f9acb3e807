import Dispatch
import Glibc
import LonglinkCore
import LonglinkStores
import LonglinkTestSupport
import Synchronization
import Testing

/// What deferred applies saw: their results (in completion order) and the threads their completions ran on.
private final class QueuedResults: Sendable {
    let results = Mutex<[Result<AppliedChange, StoreError>]>([])
    let threads = Mutex<Set<UInt>>([])

    var count: Int { results.withLock { $0.count } }

    func note(_ result: Result<AppliedChange, StoreError>) {
        results.withLock { $0.append(result) }
        threads.withLock { _ = $0.insert(UInt(pthread_self())) }
    }

    /// Polls until `expected` results arrived or 10 s passed.
    func wait(for expected: Int) {
        let deadline = ContinuousClock.now + .seconds(10)
        while count < expected && ContinuousClock.now < deadline { usleep(1_000) }
    }
}

@Suite("StoreWriter queued requests", .ownThreads)
struct StoreWriterQueuedTests {
    @Test("with commitsOnCaller, queued applies wait for commitQueued, then commit on the caller as one batch")
    func commitsOnCaller() throws {
        let counters = SpyCounters()
        let writer = try StoreWriter(configuration: .init(expiryIntervalMillis: 0, commitsOnCaller: true)) {
            SpyOrderStore(MemoryOrderStore(), counters: counters)
        }
        defer { writer.shutdown() }
        let seen = QueuedResults()
        let changes = OrderFixtures.taxiLifecycle("q1")
        for change in changes {
            writer.apply(change, deferred: true) { seen.note($0) }
        }
        #expect(seen.count == 0)
        #expect(counters.batchCalls == 0)
        writer.commitQueued()
        // Committed on this thread before commitQueued returned.
        #expect(seen.count == changes.count)
        #expect(seen.threads.withLock { $0 } == [UInt(pthread_self())])
        #expect(counters.batchSizes == [changes.count])
        let offsets = seen.results.withLock { results in results.compactMap { try? $0.get().record.position.offset } }
        #expect(offsets == Array(1...UInt64(changes.count)))
        writer.commitQueued()
        #expect(counters.batchCalls == 1)
    }

    @Test("with commitsOnCaller, a big queued batch goes to the idle writer thread instead of the caller")
    func bigBatchToWriter() throws {
        let writer = try StoreWriter(configuration: .init(expiryIntervalMillis: 0, commitsOnCaller: true)) {
            MemoryOrderStore()
        }
        defer { writer.shutdown() }
        let caller = UInt(pthread_self())
        var handedOver = false
        var committed = 0
        // The writer thread must be asleep for the hand-over; it is, unless it is still finishing the previous
        // round, so a few rounds are allowed.
        // More requests than a caller commits itself (`StoreWriter.callerBatchLimit`).
        let count = StoreWriter.callerBatchLimit + 24
        for round in 0..<50 where !handedOver {
            let seen = QueuedResults()
            for i in 0..<count {
                writer.apply(OrderFixtures.change("b\(round)-\(i)", BuiltInLines.created), deferred: true) { seen.note($0) }
            }
            writer.commitQueued()
            seen.wait(for: count)
            #expect(seen.count == count)
            committed += seen.results.withLock { $0.filter { (try? $0.get()) != nil }.count }
            handedOver = !seen.threads.withLock { $0 }.contains(caller)
            if !handedOver { usleep(10_000) }
        }
        #expect(handedOver)
        #expect(committed == writer.statistics.changes)
    }

    @Test("without commitsOnCaller, commitQueued wakes the writer thread, which commits the queue")
    func wakesWriter() throws {
        let counters = SpyCounters()
        let writer = try StoreWriter(configuration: .init(expiryIntervalMillis: 0)) {
            SpyOrderStore(MemoryOrderStore(), counters: counters)
        }
        defer { writer.shutdown() }
        let seen = QueuedResults()
        for i in 0..<10 {
            writer.apply(OrderFixtures.change("w\(i)", BuiltInLines.created), deferred: true) { seen.note($0) }
        }
        writer.commitQueued()
        seen.wait(for: 10)
        #expect(seen.count == 10)
        #expect(!seen.threads.withLock { $0 }.contains(UInt(pthread_self())))
        #expect(counters.batchSizes.reduce(0, +) == 10)
    }

    @Test("callers committing from several threads at once lose, duplicate and reorder nothing")
    func concurrentCallers() throws {
        let counters = SpyCounters()
        let writer = try StoreWriter(configuration: .init(expiryIntervalMillis: 0, commitsOnCaller: true)) {
            SpyOrderStore(MemoryOrderStore(), counters: counters)
        }
        let seen = QueuedResults()
        let threads = 4
        let ordersPerThread = 50
        let lifecycle = OrderFixtures.taxiLifecycle("x").count
        DispatchQueue.concurrentPerform(iterations: threads) { t in
            for o in 0..<ordersPerThread {
                for change in OrderFixtures.taxiLifecycle("c\(t)-\(o)") {
                    writer.apply(change, deferred: true) { seen.note($0) }
                    if o % 3 == 0 { writer.commitQueued() }
                }
                // A plain apply (wakes the writer thread) mixed in.
                writer.read({ _ in 0 }, completion: { _ in })
                writer.commitQueued()
            }
        }
        let expected = threads * ordersPerThread * lifecycle
        seen.wait(for: expected)
        writer.shutdown()
        let results = seen.results.withLock { $0 }
        #expect(results.count == expected)
        let records = results.compactMap { try? $0.get().record }
        #expect(records.count == expected)
        var lastOffset: [OrderID: UInt64] = [:]
        for record in records {
            #expect(record.position.offset == (lastOffset[record.orderID] ?? 0) + 1)
            lastOffset[record.orderID] = record.position.offset
        }
        #expect(counters.isShutDown)
        #expect(writer.statistics.changes == expected)
    }

    @Test("shutdown commits what callers queued and closes the store")
    func shutdownAfterQueued() throws {
        let counters = SpyCounters()
        let writer = try StoreWriter(configuration: .init(expiryIntervalMillis: 0, commitsOnCaller: true)) {
            SpyOrderStore(MemoryOrderStore(), counters: counters)
        }
        let seen = QueuedResults()
        for i in 0..<20 {
            writer.apply(OrderFixtures.change("s\(i)", BuiltInLines.created), deferred: true) { seen.note($0) }
        }
        writer.shutdown()
        #expect(seen.count == 20)
        #expect(seen.results.withLock { $0.allSatisfy { (try? $0.get()) != nil } })
        #expect(counters.isShutDown)
        let late = QueuedResults()
        writer.apply(OrderFixtures.change("late", BuiltInLines.created), deferred: true) { late.note($0) }
        writer.commitQueued()
        #expect(late.results.withLock { $0.count == 1 && (try? $0[0].get()) == nil })
    }
}
