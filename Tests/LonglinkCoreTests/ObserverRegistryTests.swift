import Glibc
import Dispatch
import LonglinkCore
import LonglinkTestSupport
import Synchronization
import Testing

/// Collects what it is told.
final class Collector: ContentObserver {
    let seen = Mutex<[ContentChange]>([])
    func contentDidChange(_ change: ContentChange) { seen.withLock { $0.append(change) } }
    var count: Int { seen.withLock { $0.count } }
    var orders: [String] { seen.withLock { $0.map(\.record.orderID.rawValue) } }
}

/// Real changes from a memory store: order `n<i>` created on `line`.
func changes(_ ids: [String], line: BusinessLine = .taxi) throws -> [ContentChange] {
    let store = MemoryOrderStore()
    return try ids.map { id in
        let applied = try store.apply(OrderFixtures.change(id, BuiltInLines.created, line: line))
        return ContentChange(route: applied.record.route, record: applied.record, snapshot: applied.snapshot)
    }
}

@Suite("ObserverRegistry", .ownThreads)
struct ObserverRegistryTests {
    @Test("observers get the changes of their route, namespace or everything, in order")
    func patterns() throws {
        let registry = ObserverRegistry()
        let one = Collector()
        let taxi = Collector()
        let all = Collector()
        let tokens = [
            registry.observe(Route.order(.taxi, OrderFixtures.id("a")), one),
            registry.observe(.namespace(.order, "taxi"), taxi),
            registry.observe(.all, all),
        ]
        registry.notify(try changes(["a", "b", "c"]) + changes(["a", "z"], line: .express))
        registry.waitUntilDelivered()
        #expect(one.orders == ["a"])
        #expect(taxi.orders == ["a", "b", "c"])
        #expect(all.orders == ["a", "b", "c", "a", "z"])
        #expect(tokens.count == 3 && registry.observerCount == 3)
    }

    @Test("an inline observer is told on the notifying thread before notify returns, in order, until cancelled")
    func inline() throws {
        let registry = ObserverRegistry()
        let taxi = Collector()
        let threads = Mutex<[UInt]>([])
        let token = registry.observeInline(.namespace(.order, "taxi"), taxi)
        let probe = registry.observeInline(.all, BlockObserver({ _ in
            threads.withLock { $0.append(UInt(pthread_self())) }
        }))
        // No waitUntilDelivered: an inline observer has nothing in flight once notify returned.
        registry.notify(try changes(["a", "b"]) + changes(["x"], line: .express) + changes(["c"]))
        #expect(taxi.orders == ["a", "b", "c"])
        let here = UInt(pthread_self())
        #expect(threads.withLock { $0 } == [here, here, here, here], "told on the thread that called notify")
        token.cancel()
        registry.notify(try changes(["d"]))
        #expect(taxi.orders == ["a", "b", "c"])
        #expect(registry.observerCount == 1)
        probe.cancel()
    }

    @Test("a block observer runs its closure and survives its errors")
    func blocks() throws {
        struct Boom: Error {}
        let registry = ObserverRegistry()
        let seen = Mutex<[String]>([])
        let errors = Mutex(0)
        let token = registry.observe(.all, onError: { _, _ in errors.withLock { $0 += 1 } }) { change in
            seen.withLock { $0.append(change.record.orderID.rawValue) }
            if change.record.orderID.rawValue == "b" { throw Boom() }
        }
        registry.notify(try changes(["a", "b", "c"]))
        registry.waitUntilDelivered()
        #expect(seen.withLock { $0 } == ["a", "b", "c"])
        #expect(errors.withLock { $0 } == 1)
        token.cancel()
    }

    @Test("a delegate is held weakly and its registration goes when it does")
    func delegates() throws {
        let registry = ObserverRegistry()
        var delegate: Collector? = Collector()
        weak let weakDelegate = delegate
        let token = registry.observe(.all, delegate: delegate!)
        registry.notify(try changes(["a"]))
        registry.waitUntilDelivered()
        #expect(delegate?.count == 1)
        delegate = nil
        #expect(weakDelegate == nil)
        registry.notify(try changes(["b"]))
        registry.waitUntilDelivered()
        #expect(registry.observerCount == 0)
        token.cancel()
    }

    @Test("an async stream yields changes and ends its observation when dropped")
    func stream() async throws {
        let registry = ObserverRegistry()
        do {
            let stream = registry.changes(.namespace(.order, "taxi"))
            registry.notify(try changes(["a", "b"]) + changes(["x"], line: .express) + changes(["c"]))
            var got: [String] = []
            for await change in stream {
                got.append(change.record.orderID.rawValue)
                if got.count == 3 { break }
            }
            #expect(got == ["a", "b", "c"])
            #expect(registry.observerCount == 1)
        }
        for _ in 0..<1_000 where registry.observerCount > 0 { await Task.yield() }
        #expect(registry.observerCount == 0)
    }

    @Test("a cancelled or released token stops notifications")
    func cancel() throws {
        let registry = ObserverRegistry()
        let cancelled = Collector()
        let released = Collector()
        let token = registry.observe(.all, cancelled)
        do { _ = registry.observe(.all, released) }
        token.cancel()
        #expect(token.isCancelled)
        registry.notify(try changes(["a"]))
        registry.waitUntilDelivered()
        #expect(cancelled.count == 0 && released.count == 0 && registry.observerCount == 0)
    }

    @Test("a blocked observer delays only itself; past its limit its changes are dropped and counted")
    func slowObserver() throws {
        let registry = ObserverRegistry()
        let gate = DispatchSemaphore(value: 0)
        let entered = DispatchSemaphore(value: 0)
        let slowSeen = Mutex(0)
        let slow = registry.observe(.all, limit: 10) { _ in
            if slowSeen.withLock({
                $0 += 1
                return $0
            }) == 1 {
                entered.signal()
                gate.wait()
            }
        }
        let fast = Collector()
        let fastToken = registry.observe(.all, fast)
        let batch = try changes((0..<30).map { "o\($0)" })
        registry.notify(Array(batch.prefix(1)))
        entered.wait()  // the slow observer is now stuck inside its first change
        for change in batch.dropFirst() { registry.notify([change]) }  // notify never waits for it
        #expect(registry.droppedCount == 20)  // 1 in flight + 9 queued fit its limit of 10
        gate.signal()
        registry.waitUntilDelivered()
        #expect(fast.count == 30)
        #expect(slowSeen.withLock { $0 } == 10)
        slow.cancel()
        fastToken.cancel()
    }
}
