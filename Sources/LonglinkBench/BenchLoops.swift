import Dispatch
import LonglinkCore
import LonglinkLoop
import Synchronization

/// The load generator's event loops: one `EventLoopGroup` whose threads drive every benchmark connection (Redis's
/// `redis-benchmark` runs on `ae` the same way). Each loop carries a `LoopRecorder` for its measurements; the
/// coordinating thread reads and merges them with `collect`.
final class BenchLoops: Sendable {
    let group: EventLoopGroup

    init(threads: Int) throws {
        group = try EventLoopGroup(numberOfThreads: max(1, threads)) { context in
            let recorder = LoopRecorder()
            context.attach(recorder)
            // Deliveries are counted per loop and added to the shared counter once per iteration, not per delivery.
            context.addBeforeSleep { recorder.flushDeliveries() }
        }
    }

    var loops: [EventLoop] { group.loops }

    /// Loop `index % count`.
    func loop(_ index: Int) -> EventLoop { group.loops[index % group.loops.count] }

    /// Runs `body` on every loop and returns the results (in loop order), waiting at most `timeout`.
    func collect<T: Sendable>(timeout: Duration = .seconds(10), _ body: @escaping @Sendable (LoopContext) -> T) -> [T] {
        let results = Mutex<[Int: T]>([:])
        let done = DispatchSemaphore(value: 0)
        for loop in group.loops {
            let id = loop.id
            let posted = loop.execute { context in
                let value = body(context)
                results.withLock { $0[id] = value }
                done.signal()
            }
            if !posted { done.signal() }
        }
        let deadline = DispatchTime.now() + .milliseconds(Int(timeout.components.seconds * 1000))
        for _ in group.loops { _ = done.wait(timeout: deadline) }
        return results.withLock { table in group.loops.compactMap { table[$0.id] } }
    }

    /// Merged histograms of every loop's recorder (and every delivery recorded so far added to its counter).
    func histograms(resetInterval: Bool = false) -> (total: LatencyHistogram, interval: LatencyHistogram, connect: LatencyHistogram) {
        let parts = collect { context -> (LatencyHistogram, LatencyHistogram, LatencyHistogram) in
            guard let recorder = context.attachment(LoopRecorder.self) else { return (.init(), .init(), .init()) }
            recorder.flushDeliveries()
            let snapshot = (recorder.latency, recorder.interval, recorder.connect)
            if resetInterval { recorder.startInterval() }
            return snapshot
        }
        var total = LatencyHistogram()
        var interval = LatencyHistogram()
        var connect = LatencyHistogram()
        for part in parts {
            total.merge(part.0)
            interval.merge(part.1)
            connect.merge(part.2)
        }
        return (total, interval, connect)
    }

    /// Clears every recorder (between the phases of a run).
    func resetRecorders() {
        _ = collect { context in context.attachment(LoopRecorder.self)?.resetAll() }
    }

    func shutdown() { group.shutdownGracefully() }
}

/// One loop's measurements. Loop-confined (an attachment of its `LoopContext`).
///
/// Recording a delivery is on the load generator's hot path, so it does as little as it can: one histogram update
/// (the current interval's; the run's total is the earlier intervals merged with it, folded together once per
/// progress tick), and a plain count that `flushDeliveries` adds to the shared atomic counter once per loop
/// iteration. The two histograms live in memory the recorder owns, so an update is not an exclusive access to a
/// class property checked at run time.
final class LoopRecorder {
    /// Publish→deliver latency of the intervals before the current one.
    private let earlier: UnsafeMutablePointer<LatencyHistogram>
    /// Publish→deliver latency since the last progress tick.
    private let current: UnsafeMutablePointer<LatencyHistogram>
    /// Connect (TCP + handshake) latency.
    var connect = LatencyHistogram()
    /// When the last delivery arrived (monotonic ns; 0 = none yet).
    var lastDeliveryAt: UInt64 = 0
    /// Deliveries recorded and not yet added to `unflushedCounters.deliveries`.
    private var unflushed = 0
    private var unflushedCounters: BenchCounters?

    init() {
        earlier = .allocate(capacity: 1)
        earlier.initialize(to: LatencyHistogram())
        current = .allocate(capacity: 1)
        current.initialize(to: LatencyHistogram())
    }

    deinit {
        earlier.deinitialize(count: 1)
        earlier.deallocate()
        current.deinitialize(count: 1)
        current.deallocate()
    }

    /// Publish→deliver latency of the whole run.
    var latency: LatencyHistogram {
        var total = earlier.pointee
        total.merge(current.pointee)
        return total
    }

    /// Publish→deliver latency since the last progress tick.
    var interval: LatencyHistogram { current.pointee }

    /// Starts a new interval (the current one joins the run's total).
    func startInterval() {
        earlier.pointee.merge(current.pointee)
        current.pointee.reset()
    }

    /// Records one delivery sent at `sentAt` and received at `now` (monotonic nanoseconds), counted in
    /// `counters.deliveries` by the next `flushDeliveries`.
    func recordDelivery(sentAt: UInt64, now: UInt64, counters: BenchCounters) {
        if counters !== unflushedCounters {
            flushDeliveries()
            unflushedCounters = counters
        }
        unflushed += 1
        let value = now &- sentAt
        current.pointee.record(value > (1 << 62) ? 0 : value)  // a clock step backwards would wrap
        lastDeliveryAt = now
    }

    /// Adds the deliveries recorded since the last call to their counter (before the loop sleeps).
    func flushDeliveries() {
        guard unflushed > 0 else { return }
        unflushedCounters?.deliveries.add(unflushed)
        unflushed = 0
    }

    func resetAll() {
        flushDeliveries()
        earlier.pointee.reset()
        current.pointee.reset()
        connect.reset()
        lastDeliveryAt = 0
    }
}

@available(*, unavailable)
extension LoopRecorder: Sendable {}

/// Counters shared by the loops (relaxed atomic adds) and the coordinating thread (reads).
final class BenchCounters: Sendable {
    /// Connections established (handshake done).
    let connected = Atomic<Int>(0)
    /// With TLS: established connections whose handshake was a full one, and ones that resumed a saved session.
    let tlsFull = Atomic<Int>(0)
    let tlsResumed = Atomic<Int>(0)
    /// Subscriptions confirmed.
    let subscribed = Atomic<Int>(0)
    /// Connections that failed or closed without being asked to.
    let failed = Atomic<Int>(0)
    /// Deliveries received (pushes or pub/sub messages, duplicates excluded).
    let deliveries = Atomic<Int>(0)
    /// Deliveries received again (same or older sequence).
    let duplicates = Atomic<Int>(0)
    /// Sequence gaps seen by subscribers (records skipped).
    let gaps = Atomic<Int>(0)
    /// Publishes sent.
    let published = Atomic<Int>(0)
    /// Publishes acknowledged (stored, or accepted by Redis).
    let acknowledged = Atomic<Int>(0)
    /// Publishes refused.
    let refused = Atomic<Int>(0)
    /// Deliveries the acknowledged publishes should cause.
    let expected = Atomic<Int>(0)
    /// Records recovered by resuming subscriptions (storm).
    let recovered = Atomic<Int>(0)
    /// Connections closed on purpose (churn).
    let closedOnPurpose = Atomic<Int>(0)
    /// Records a subscriber did not receive as pushes because a subscribe snapshot already covered them.
    let coveredBySnapshot = Atomic<Int>(0)
    /// Resumed subscriptions the server could not recover (answered with `recovered = false`).
    let notRecovered = Atomic<Int>(0)
    /// Subscriptions confirmed again after a cut (storm).
    let resubscribed = Atomic<Int>(0)
    /// Reconnect attempts after the server went away (storm --restart: subscribers and the publisher).
    let reconnects = Atomic<Int>(0)
    /// Publishes resent after a reconnect (same request id and idempotency key).
    let retried = Atomic<Int>(0)
    /// Publishes the store answered as already applied (a resend of a publish stored before the server died).
    let deduplicated = Atomic<Int>(0)
    private let reasons = Mutex<[String: Int]>([:])

    init() {}

    /// Counts a failure by reason (bounded: the reason texts are few).
    func fail(_ reason: String) {
        failed.add(1)
        reasons.withLock { $0[reason, default: 0] += 1 }
    }

    /// Failures by reason.
    var failureReasons: [String: Int] { reasons.withLock { $0 } }

    /// Counts the TLS handshake of a connection that just opened as full or resumed (nothing for plain TCP).
    func countTLSHandshake(of connection: BenchConnection) {
        guard let resumed = connection.tlsSessionResumed else { return }
        if resumed { tlsResumed.add(1) } else { tlsFull.add(1) }
    }
}

extension Atomic where Value == Int {
    /// Relaxed add, for counters.
    func add(_ delta: Int) { wrappingAdd(delta, ordering: .relaxed) }
    /// Relaxed read.
    var value: Int { load(ordering: .relaxed) }
}
