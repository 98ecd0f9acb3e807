import Dispatch
import LonglinkCore
import LonglinkStores
import LonglinkTestSupport
import Synchronization
import Testing

/// Holds the writer thread inside a read until released, so requests pile up in its queue.
func blockWriter(_ writer: StoreWriter) -> DispatchSemaphore {
    let entered = DispatchSemaphore(value: 0)
    let gate = DispatchSemaphore(value: 0)
    writer.read(
        { _ in
            entered.signal()
            gate.wait()
        },
        completion: { _ in }
    )
    entered.wait()
    return gate
}

@Suite("StoreWriter", .ownThreads)
struct StoreWriterTests {
    @Test("applies queued behind a busy writer are committed as one batch")
    func groupCommit() throws {
        let counters = SpyCounters()
        let writer = try StoreWriter { SpyOrderStore(MemoryOrderStore(), counters: counters) }
        defer { writer.shutdown() }
        let gate = blockWriter(writer)
        let done = DispatchSemaphore(value: 0)
        let failures = Atomic<Int>(0)
        let orders = 200
        DispatchQueue.concurrentPerform(iterations: orders) { i in
            writer.apply(OrderFixtures.change("g\(i)", BuiltInLines.created)) { result in
                if case .failure = result { failures.add(1, ordering: .relaxed) }
                done.signal()
            }
        }
        #expect(counters.batchCalls == 0)
        gate.signal()
        for _ in 0..<orders { done.wait() }
        #expect(failures.load(ordering: .relaxed) == 0)
        #expect(counters.batchSizes == [orders])
        #expect(writer.statistics.batches == 1 && writer.statistics.changes == orders)
    }

    @Test("a completion comes after its batch is durable, observers after completions")
    func durableBeforeCompletion() async throws {
        let counters = SpyCounters()
        let registry = ObserverRegistry()
        let completed = Mutex<Set<UInt64>>([])
        let observedEarly = Atomic<Int>(0)
        let observed = Atomic<Int>(0)
        let token = registry.observe(.all) { change in
            if !counters.isCommitted(change.record)
                || !completed.withLock({ $0.contains(change.record.position.offset) })
            {
                observedEarly.add(1, ordering: .relaxed)
            }
            observed.add(1, ordering: .relaxed)
        }
        defer { token.cancel() }
        let writer = try StoreWriter(observers: registry) { SpyOrderStore(MemoryOrderStore(), counters: counters) }
        defer { writer.shutdown() }
        for change in OrderFixtures.taxiLifecycle("t1") {
            let applied: AppliedChange = try await withCheckedThrowingContinuation { continuation in
                writer.apply(change) { result in
                    if case .success(let applied) = result {
                        #expect(counters.isCommitted(applied.record))
                        completed.withLock { _ = $0.insert(applied.record.position.offset) }
                    }
                    continuation.resume(with: result)
                }
            }
            #expect(applied.record.toState == change.targetState)
        }
        // Observers are told after the completions, on the writer thread: the last notification may not even be
        // queued yet when the last completion resumes this task, so wait for it (bounded) before draining.
        let deadline = ContinuousClock.now + .seconds(10)
        while observed.load(ordering: .relaxed) < 8 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        registry.waitUntilDelivered()
        #expect(observed.load(ordering: .relaxed) == 8)
        #expect(observedEarly.load(ordering: .relaxed) == 0)
    }

    @Test("reads run on the writer and see applied changes; refusals come back as errors")
    func reads() async throws {
        let writer = try StoreWriter { MemoryOrderStore() }
        defer { writer.shutdown() }
        _ = try await writer.apply(OrderFixtures.change("r1", BuiltInLines.created))
        _ = try await writer.apply(OrderFixtures.change("r1", BuiltInLines.dispatching))
        let snapshot = try await writer.read { store throws(StoreError) in
            try store.snapshot(of: .taxi, OrderFixtures.id("r1"))
        }
        #expect(snapshot?.state == BuiltInLines.dispatching)
        let history = try await writer.read { store throws(StoreError) in
            try store.records(of: .taxi, OrderFixtures.id("r1"), after: .zero, limit: 10)
        }
        guard case .records(let records) = history else {
            Issue.record("expected records")
            return
        }
        #expect(records.count == 2 && records.allSatisfy { $0.position.epoch == writer.epoch })
        await #expect(throws: StoreError.unknownOrder(.taxi, OrderFixtures.id("r2"))) {
            try await writer.apply(OrderFixtures.change("r2", BuiltInLines.dispatching))
        }
        #expect(try writer.readAndWait { store in store.epoch } == writer.epoch)
        let caught: StoreWriter.CatchUp = try await withCheckedThrowingContinuation { continuation in
            writer.catchUp(
                .taxi,
                OrderFixtures.id("r1"),
                after: StreamPosition(epoch: writer.epoch, offset: 1),
                limit: 10
            ) {
                continuation.resume(with: $0)
            }
        }
        #expect(caught.snapshot?.position.offset == 2)
        #expect(caught.epoch == writer.epoch)
        guard case .records(let missed)? = caught.history else {
            Issue.record("expected records")
            return
        }
        #expect(missed.map(\.toState) == [BuiltInLines.dispatching])
    }

    @Test("a blocked observer does not hold up the writer")
    func slowObserver() async throws {
        let registry = ObserverRegistry(defaultLimit: 1_000)
        let gate = DispatchSemaphore(value: 0)
        let token = registry.observe(.all) { _ in gate.wait() }
        defer { token.cancel() }
        let writer = try StoreWriter(observers: registry) { MemoryOrderStore() }
        defer { writer.shutdown() }
        for i in 0..<100 {
            _ = try await writer.apply(OrderFixtures.change("s\(i)", BuiltInLines.created))
        }
        #expect(writer.statistics.changes == 100)
        for _ in 0..<100 { gate.signal() }
        registry.waitUntilDelivered()
    }

    @Test("shutdown applies what is queued, closes the store, then refuses")
    func shutdown() throws {
        let counters = SpyCounters()
        let writer = try StoreWriter { SpyOrderStore(MemoryOrderStore(), counters: counters) }
        let gate = blockWriter(writer)
        let succeeded = Atomic<Int>(0)
        for i in 0..<50 {
            writer.apply(OrderFixtures.change("d\(i)", BuiltInLines.created)) { result in
                if case .success = result { succeeded.add(1, ordering: .relaxed) }
            }
        }
        let stopped = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            writer.shutdown()
            stopped.signal()
        }
        gate.signal()
        stopped.wait()
        #expect(succeeded.load(ordering: .relaxed) == 50)
        #expect(counters.isShutDown)
        let late = Mutex<StoreError?>(nil)
        writer.apply(OrderFixtures.change("late", BuiltInLines.created)) { result in
            if case .failure(let error) = result { late.withLock { $0 = error } }
        }
        #expect(late.withLock { $0 } == .closed)
        writer.shutdown()
    }

    @Test("a store that cannot be opened fails the writer's start")
    func openFailure() {
        #expect(throws: StoreError.storage("disk gone", retryable: false)) {
            _ = try StoreWriter { () throws(StoreError) -> any OrderStore in
                throw .storage("disk gone", retryable: false)
            }
        }
    }

    @Test("expiry runs periodically on the writer thread")
    func expiry() async throws {
        let clock = ManualWallClock()
        let writer = try StoreWriter(configuration: .init(expiryIntervalMillis: 1, clock: clock)) {
            MemoryOrderStore(retention: StoreRetention(terminalOrderTTLMillis: 1_000), clock: clock)
        }
        defer { writer.shutdown() }
        _ = try await writer.apply(OrderFixtures.change("e1", BuiltInLines.created))
        _ = try await writer.apply(
            OrderFixtures.change("e1", BuiltInLines.cancelled, fields: OrderFields(cancellationReason: "r"))
        )
        clock.advance(byMillis: 5_000)
        for _ in 0..<5_000 where writer.statistics.expiredOrders == 0 {
            try await Task.sleep(for: .milliseconds(1))
        }
        #expect(writer.statistics.expiredOrders == 1)
        #expect(
            try await writer.read { store throws(StoreError) in try store.snapshot(of: .taxi, OrderFixtures.id("e1")) }
                == nil
        )
    }
}
