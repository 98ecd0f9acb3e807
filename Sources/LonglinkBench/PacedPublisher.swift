import LonglinkCore
import LonglinkLoop

/// Sends one benchmark publish to the system under test. Loop-confined.
protocol PublishSink: AnyObject {
    /// Whether the sink's connection is up.
    var isReady: Bool { get }
    /// Sends a publish on `route` whose payload carries `stamp` (send time, route sequence) and is `payloadSize`
    /// bytes long (see `BenchPayload`); answers later with `publisher.acknowledged`.
    func publish(route: Int, stamp: (timestamp: UInt64, sequence: UInt64), payloadSize: Int)
}

/// Drives a `PublishSink` at the workload's rate: a 1 ms timer releases what is due (rate × elapsed − sent),
/// bounded by the publish window and the delivery window; with rate 0, every acknowledgement releases the next
/// publish. Routes are used round-robin; each route has its own sequence, carried in the payload with the send
/// time, so subscribers can tell lost, duplicate and late deliveries apart. Loop-confined.
final class PacedPublisher {
    let workload: FanoutWorkload
    let counters: BenchCounters
    /// Whether acknowledged publishes add to `counters.expected` (false while preparing routes).
    let countsDeliveries: Bool
    /// Whether payloads carry the route sequence (preparation publishes carry 0, so they never count as deliveries).
    private let stampsSequences: Bool
    var sink: (any PublishSink)?
    private unowned let context: LoopContext
    private var timer: TimerID?
    private var startedAt: UInt64 = 0
    private var sent = 0
    private var inFlight = 0
    private var limit = 0
    private var nextRoute = 0
    /// The last sequence sent on each route, in memory the publisher owns (no run-time exclusivity check per send).
    private let sequences: UnsafeMutableBufferPointer<UInt64>
    /// Deliveries the publishes sent so far will cause (for the delivery window).
    private var sentDeliveries = 0
    private(set) var stopped = true
    /// Called once when every publish has been sent and answered (or `stop()` was called).
    var onFinished: (() -> Void)?

    init(workload: FanoutWorkload, counters: BenchCounters, countsDeliveries: Bool, context: LoopContext) {
        self.stampsSequences = countsDeliveries
        self.workload = workload
        self.counters = counters
        self.countsDeliveries = countsDeliveries
        self.context = context
        self.sequences = .allocate(capacity: workload.routes)
        sequences.initialize(repeating: 0)
    }

    /// Starts sending `messages` publishes.
    func start(messages: Int) {
        limit = messages
        sent = 0
        stopped = false
        startedAt = MonotonicClock.nanoseconds()
        // The timer holds the publisher until `stop` or the last answer cancels it (no weak reference: see
        // `BenchConnection`). Paced, it releases what is due every millisecond; as fast as acknowledged, answers
        // release the next publishes and the timer only restarts a publisher held back by the delivery window or
        // a sink that was not ready, so it need not wake the loop a thousand times a second.
        timer = context.schedule(every: .milliseconds(workload.rate > 0 ? 1 : 10)) { self.release() }
        release()
    }

    /// Stops sending (publishes in flight are still counted when answered).
    func stop() {
        guard !stopped else { return }
        stopped = true
        if let timer { context.cancel(timer) }
        timer = nil
        finishIfDone()
    }

    /// The sink's answer to one publish.
    func acknowledged(route: Int, accepted: Bool) {
        inFlight -= 1
        if accepted {
            counters.acknowledged.add(1)
            if countsDeliveries { counters.expected.add(workload.subscribers(onRoute: route)) }
        } else {
            counters.refused.add(1)
            sentDeliveries -= workload.subscribers(onRoute: route)
        }
        if workload.rate == 0 { release() }
        finishIfDone()
    }

    /// The sink is connected again after a loss (storm --restart): send what is due now rather than at the next
    /// timer tick or acknowledgement.
    func sinkBecameReady() { release() }

    private func finishIfDone() {
        guard inFlight == 0, stopped || sent >= limit else { return }
        if let timer { context.cancel(timer) }
        timer = nil
        stopped = true
        let finished = onFinished
        onFinished = nil
        finished?()
    }

    private func release() {
        guard !stopped, let sink, sink.isReady else { return }
        var due = limit - sent
        if workload.rate > 0 {
            let elapsed = Double(MonotonicClock.nanoseconds() &- startedAt) / 1e9
            due = min(due, Int(workload.rate * elapsed) + 1 - sent)
        }
        // The publishes released together go out in one write at the end of this loop iteration: one send time.
        let now = BenchPayload.now()
        var released = 0
        while due > 0 && inFlight < workload.window {
            if countsDeliveries && sentDeliveries - counters.deliveries.value >= workload.deliveryWindow { break }
            let route = nextRoute
            nextRoute = (nextRoute + 1) % workload.routes
            sequences[route] += 1
            sent += 1
            inFlight += 1
            due -= 1
            released += 1
            if countsDeliveries { sentDeliveries += workload.subscribers(onRoute: route) }
            sink.publish(route: route, stamp: (now, stampsSequences ? sequences[route] : 0), payloadSize: workload.payload)
        }
        if released > 0 { counters.published.add(released) }
        if sent >= limit && workload.rate > 0, let timer {
            context.cancel(timer)
            self.timer = nil
        }
    }

    /// The last sequence sent on each route (loss accounting).
    var lastSequences: [UInt64] { Array(sequences) }

    deinit { sequences.deallocate() }
}

@available(*, unavailable)
extension PacedPublisher: Sendable {}
