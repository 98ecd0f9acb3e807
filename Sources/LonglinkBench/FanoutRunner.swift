import Glibc
import LonglinkCore
import LonglinkLoop
import Synchronization

/// The system a fan-out runs against.
enum FanoutSystem: Sendable {
    case longlink(BenchEndpoint)
    case redis(SocketAddress)
    /// Longlink with ride-hailing lifecycles (the orders scenario).
    case orders(BenchEndpoint)

    var name: String {
        switch self {
        case .longlink, .orders: "longlink"
        case .redis: "redis"
        }
    }

    /// `" over TLS"`, `" over WebSocket"`, ... for Longlink, empty for plain TCP and Redis (for run labels).
    var transportLabel: String {
        switch self {
        case .longlink(let endpoint), .orders(let endpoint): endpoint.label
        case .redis: ""
        }
    }
}

/// Flags the loops set for the coordinating thread.
final class RunFlags: Sendable {
    let prepared = Atomic<Bool>(false)
    let publishingDone = Atomic<Bool>(false)
    let publishStartedAt = Atomic<UInt64>(0)
}

/// The publisher side of a run, attached to loop 0.
final class PublisherBox {
    var longlinkSink: LonglinkPublishSink?
    var redisSink: RedisPublishSink?
    var ordersSink: LonglinkPublishSink?
    var publisher: PacedPublisher?

    var sink: (any PublishSink)? { longlinkSink ?? redisSink ?? ordersSink }

    /// Points every sink at `publisher`.
    func use(_ publisher: PacedPublisher) {
        self.publisher = publisher
        longlinkSink?.publisher = publisher
        redisSink?.publisher = publisher
        ordersSink?.publisher = publisher
    }

    func close() {
        publisher?.stop()
        longlinkSink?.close()
        redisSink?.close()
        ordersSink?.close()
        longlinkSink = nil
        redisSink = nil
        ordersSink = nil
        publisher = nil
    }
}

@available(*, unavailable)
extension PublisherBox: Sendable {}

/// Runs one fan-out (connect S subscribers, publish M changes, drain, measure) against Longlink or Redis on the
/// benchmark's loops, from the coordinating thread. Every phase is bounded by the timeout, the publishing phase
/// also by the duration; an interrupt ends the phase in progress and the run reports what it has.
struct FanoutRunner {
    let loops: BenchLoops
    let control: BenchControl
    let duration: Duration
    let timeout: Duration
    /// Extra work while publishing, e.g. churn connections (started after the subscribers, stopped before the drain).
    var background: (start: @Sendable () -> Void, stop: @Sendable () -> Void)?
    /// Called about every 50 ms while publishing, with the seconds since publishing began (storm cuts clients).
    var duringPublishing: (@Sendable (_ elapsed: Double, _ counters: BenchCounters) -> Void)?
    /// A further condition the drain waits for (up to the whole timeout, not only 15 s), with `duringPublishing`
    /// still called meanwhile: storm waits so for every client to be back after a slow recovery.
    var drainUntil: (@Sendable (_ counters: BenchCounters) -> Bool)?
    /// Extra figures computed at the end of the run.
    var extraFigures: (@Sendable (_ counters: BenchCounters) -> [Figure])?
    /// Whether Longlink subscribers and the publisher reconnect by themselves when the server goes away, resuming
    /// and retrying unacknowledged publishes with their idempotency keys (storm --restart).
    var survivesRestarts = false
    /// How subscribers read once subscribed: `.ioUring` moves each plain-TCP subscriber's socket to its loop's
    /// `BenchUringReader` (the fan-out scenario; the others keep epoll).
    var reader: BenchReader = .epoll
    /// With `.ioUring`: completions a ring wait asks for, and how long a completion may wait for them (see
    /// `BenchUringReader`).
    var readerBatch = BenchUringReader.defaultBatch
    var readerWaitNanoseconds = BenchUringReader.defaultMinWaitNanoseconds

    /// Runs the workload against `system`; `serverPID` (when known) adds the server's CPU and memory figures.
    /// `publishTo` (Longlink only) sends the publisher to another node than the subscribers (cross-node fan-out).
    func run(_ system: FanoutSystem, workload: FanoutWorkload, label: String, serverPID: Int32?, publishTo: BenchEndpoint? = nil) -> BenchRun {
        var run = BenchRun(system: system.name, label: label + system.transportLabel)
        let survivesRestarts = self.survivesRestarts
        let names = RouteNames()
        let counters = BenchCounters()
        let flags = RunFlags()
        loops.resetRecorders()
        defer { tearDown() }

        // 1. The publisher connects; for Longlink it creates one order per route (not measured).
        let prepareCounters = BenchCounters()
        loops.loop(0).execute { context in
            let box = PublisherBox()
            context.attach(box)
            switch system {
            case .longlink(let endpoint):
                let sink = LonglinkPublishSink(
                    plan: ReassignmentPlan(names: names, routes: workload.routes),
                    endpoint: publishTo ?? endpoint,
                    context: context,
                    counters: prepareCounters,
                    survivesRestarts: survivesRestarts
                )
                box.longlinkSink = sink
                var creation = workload
                creation.rate = 0
                let creator = PacedPublisher(workload: creation, counters: prepareCounters, countsDeliveries: false, context: context)
                creator.sink = sink
                creator.onFinished = { flags.prepared.store(true, ordering: .relaxed) }
                sink.publisher = creator
                box.publisher = creator
                sink.onReady = { creator.start(messages: workload.routes) }
            case .redis(let address):
                let sink = RedisPublishSink(names: names, routes: workload.routes, address: address, context: context, counters: prepareCounters)
                box.redisSink = sink
                sink.onReady = { flags.prepared.store(true, ordering: .relaxed) }
            case .orders(let endpoint):
                let sink = LonglinkPublishSink(
                    plan: LifecyclePlan(names: names, slots: workload.routes),
                    endpoint: endpoint,
                    context: context,
                    counters: counters,
                    survivesRestarts: survivesRestarts
                )
                box.ordersSink = sink
                sink.onReady = { flags.prepared.store(true, ordering: .relaxed) }
            }
        }
        let prepared = control.wait(timeout: timeout) { flags.prepared.load(ordering: .relaxed) || prepareCounters.failed.value > 0 }
        guard prepared, prepareCounters.failed.value == 0 else {
            run.failures = prepareCounters.failureReasons
            if !prepared { run.failures["publisher not ready", default: 0] += 1 }
            return run
        }

        // 2. Subscribers connect and subscribe, a window at a time per loop.
        let connectStart = MonotonicClock.nanoseconds()
        openSubscribers(system, workload: workload, names: names, counters: counters)
        control.wait(timeout: timeout) { counters.subscribed.value + counters.failed.value >= workload.subscribers }
        let subscribeSeconds = seconds(from: connectStart, to: MonotonicClock.nanoseconds())
        control.progress("\(system.name): \(counters.subscribed.value)/\(workload.subscribers) subscribed in \(format(subscribeSeconds)) s")

        // 3. Publish, sampling once a second.
        let statsBefore = serverPID.flatMap { ProcessStats.read(pid: $0) }
        let benchBefore = ProcessStats.read(pid: getpid())
        let sleepsBefore = ProcessStats.voluntarySwitches(pid: getpid())
        background?.start()
        let publisherThroughRing = reader == .ioUring
        let batch = readerBatch
        let wait = readerWaitNanoseconds
        loops.loop(0).execute { context in
            guard let box = context.attachment(PublisherBox.self), let sink = box.sink else { return }
            // With io_uring the publisher's answers come through the same ring as the deliveries: the loop sleeps
            // in the ring, which takes them with the deliveries, without a read of their own.
            if publisherThroughRing, let ring = BenchUringReader.of(context, batch: batch, minWaitNanoseconds: wait) {
                box.longlinkSink?.readThroughRing(ring)
                box.redisSink?.readThroughRing(ring)
            }
            let publisher = PacedPublisher(workload: workload, counters: counters, countsDeliveries: true, context: context)
            publisher.sink = sink
            box.use(publisher)
            box.longlinkSink?.counters = counters  // failures and retries while publishing count in the run
            publisher.onFinished = { flags.publishingDone.store(true, ordering: .relaxed) }
            flags.publishStartedAt.store(MonotonicClock.nanoseconds(), ordering: .relaxed)
            publisher.start(messages: workload.messages)
        }
        var sampler = SeriesSampler(loops: loops, counters: counters, control: control, system: system.name)
        let deadline = ContinuousClock.now + duration
        while !flags.publishingDone.load(ordering: .relaxed) && !control.isInterrupted && ContinuousClock.now < deadline {
            control.wait(timeout: .milliseconds(50)) { flags.publishingDone.load(ordering: .relaxed) }
            sampler.sampleIfDue()
            duringPublishing?(seconds(from: flags.publishStartedAt.load(ordering: .relaxed), to: MonotonicClock.nanoseconds()), counters)
        }
        loops.loop(0).execute { context in context.attachment(PublisherBox.self)?.publisher?.stop() }
        control.wait(timeout: .seconds(5), honourInterrupt: false) { flags.publishingDone.load(ordering: .relaxed) }
        background?.stop()

        // 4. Drain: wait for the deliveries the acknowledged publishes should cause.
        let drainUntil = self.drainUntil
        let duringPublishing = self.duringPublishing
        control.wait(timeout: drainUntil == nil ? min(timeout, .seconds(15)) : timeout) {
            sampler.sampleIfDue()
            duringPublishing?(seconds(from: flags.publishStartedAt.load(ordering: .relaxed), to: MonotonicClock.nanoseconds()), counters)
            let delivered = counters.deliveries.value + counters.coveredBySnapshot.value >= counters.expected.value
            return delivered && (drainUntil?(counters) ?? true)
        }
        let statsAfter = serverPID.flatMap { ProcessStats.read(pid: $0) }
        let benchAfter = ProcessStats.read(pid: getpid())
        let sleepsAfter = ProcessStats.voluntarySwitches(pid: getpid())
        sampler.sample()

        // 5. Figures.
        let recorders = loops.collect { context -> UInt64 in context.attachment(LoopRecorder.self)?.lastDeliveryAt ?? 0 }
        let started = flags.publishStartedAt.load(ordering: .relaxed)
        let lastDelivery = recorders.max() ?? 0
        let elapsed = seconds(from: started, to: max(lastDelivery, started))
        let histograms = loops.histograms()
        let deliveries = counters.deliveries.value
        run.figures = [
            Figure("subscribers", Double(workload.subscribers)),
            Figure("subscribed", Double(counters.subscribed.value)),
            Figure("routes", Double(workload.routes)),
            Figure("published", Double(counters.published.value)),
            Figure("acknowledged", Double(counters.acknowledged.value)),
            Figure("refused", Double(counters.refused.value)),
            Figure("expected_deliveries", Double(counters.expected.value)),
            Figure("deliveries", Double(deliveries)),
            Figure("covered_by_snapshot", Double(counters.coveredBySnapshot.value)),
            Figure("lost", Double(max(0, counters.expected.value - deliveries - counters.coveredBySnapshot.value))),
            Figure("duplicates", Double(counters.duplicates.value)),
            Figure("gaps", Double(counters.gaps.value)),
            Figure("seconds", elapsed, "s"),
            Figure("deliveries_per_second", elapsed > 0 ? Double(deliveries) / elapsed : 0, "/s"),
            Figure("publishes_per_second", elapsed > 0 ? Double(counters.acknowledged.value) / elapsed : 0, "/s"),
            Figure("subscribe_seconds", subscribeSeconds, "s"),
        ]
        if let before = statsBefore, let after = statsAfter {
            let wall = max(elapsed, 0.001)
            run.figures.append(Figure("server_cpu_percent", 100 * (after.cpuSeconds - before.cpuSeconds) / wall, "%"))
            run.figures.append(Figure("server_rss_bytes", Double(after.residentBytes), "B"))
            // Where the server's CPU goes per delivery: its own code, or the kernel (on loopback, a sender's
            // `sendmsg` also runs the receiver's TCP input). Both servers make one send per delivery on many routes,
            // so the kernel part is a floor that no user-space work removes.
            if deliveries > 0 {
                let perDelivery = 1e6 / Double(deliveries)
                run.figures.append(Figure("server_user_us_per_delivery", (after.userSeconds - before.userSeconds) * perDelivery, "µs"))
                run.figures.append(
                    Figure("server_system_us_per_delivery", (after.systemSeconds - before.systemSeconds) * perDelivery, "µs")
                )
            }
        }
        if let before = benchBefore, let after = benchAfter, deliveries > 0 {
            // The load generator shares the machine: its CPU per delivery is what the server cannot use. Split like
            // the server's: its own code, and the kernel's work for its reads, writes and wake-ups.
            let perDelivery = 1e6 / Double(deliveries)
            run.figures.append(Figure("bench_cpu_us_per_delivery", (after.cpuSeconds - before.cpuSeconds) * perDelivery, "µs"))
            run.figures.append(Figure("bench_user_us_per_delivery", (after.userSeconds - before.userSeconds) * perDelivery, "µs"))
            run.figures.append(Figure("bench_system_us_per_delivery", (after.systemSeconds - before.systemSeconds) * perDelivery, "µs"))
        }
        if let before = sleepsBefore, let after = sleepsAfter, deliveries > 0 {
            // How often the load generator's threads slept (each sleep and wake-up costs kernel time; the
            // coordinating thread's 50 ms waits are a few per second of it).
            run.figures.append(Figure("bench_sleeps_per_delivery", Double(after - before) / Double(deliveries)))
        }
        run.figures += extraFigures?(counters) ?? []
        run.setLatency(histograms.total)
        run.connectLatency = histograms.connect.count > 0 ? LatencySummary(histograms.connect) : nil
        run.failures = counters.failureReasons
        run.series = sampler.points
        return run
    }

    private func openSubscribers(_ system: FanoutSystem, workload: FanoutWorkload, names: RouteNames, counters: BenchCounters) {
        let loopCount = loops.loops.count
        let survivesRestarts = self.survivesRestarts
        let throughRing = reader == .ioUring
        let batch = readerBatch
        let wait = readerWaitNanoseconds
        for (position, loop) in loops.loops.enumerated() {
            let indices = Array(stride(from: position, to: workload.subscribers, by: loopCount))
            loop.execute { context in
                SubscriberPool.of(context).open(indices) { index, context, settled in
                    let route = workload.route(ofSubscriber: index)
                    switch system {
                    case .longlink(let endpoint):
                        let subscriber = LonglinkSubscriber(
                            index: index,
                            route: route,
                            routeText: names.route(route),
                            endpoint: endpoint,
                            context: context,
                            counters: counters
                        )
                        subscriber.reconnectsAfterLoss = survivesRestarts
                        subscriber.onSubscribed = { subscriber in
                            if throughRing, let ring = BenchUringReader.of(context, batch: batch, minWaitNanoseconds: wait) { subscriber.readThroughRing(ring) }
                            counters.subscribed.add(1)
                            settled()
                        }
                        subscriber.onLost = { _ in settled() }
                        subscriber.onResubscribed = { _ in counters.resubscribed.add(1) }
                        subscriber.start()
                        return subscriber
                    case .orders(let endpoint):
                        return OrdersScenario.subscriber(
                            index: index,
                            slot: route,
                            names: names,
                            endpoint: endpoint,
                            context: context,
                            counters: counters,
                            settled: settled
                        )
                    case .redis(let address):
                        let subscriber = RedisSubscriber(
                            index: index,
                            channel: names.channel(route),
                            address: address,
                            context: context,
                            counters: counters
                        )
                        subscriber.onSubscribed = { subscriber in
                            if throughRing, let ring = BenchUringReader.of(context, batch: batch, minWaitNanoseconds: wait) { subscriber.readThroughRing(ring) }
                            counters.subscribed.add(1)
                            settled()
                        }
                        subscriber.onLost = { _ in settled() }
                        return subscriber
                    }
                }
            }
        }
    }

    private func tearDown() {
        _ = loops.collect { context in
            context.attachment(PublisherBox.self)?.close()
            context.detach(PublisherBox.self)
            context.attachment(SubscriberPool.self)?.closeAll()
            context.detach(SubscriberPool.self)
        }
    }
}

/// Takes one `SeriesPoint` per second from the counters and the loops' interval histograms, and shows progress.
struct SeriesSampler {
    let loops: BenchLoops
    let counters: BenchCounters
    let control: BenchControl
    let system: String
    private(set) var points: [SeriesPoint] = []
    private let start = MonotonicClock.nanoseconds()
    private var last: UInt64
    private var lastDeliveries = 0
    private var lastAcknowledged = 0

    init(loops: BenchLoops, counters: BenchCounters, control: BenchControl, system: String) {
        self.loops = loops
        self.counters = counters
        self.control = control
        self.system = system
        self.last = start
    }

    mutating func sampleIfDue() {
        if MonotonicClock.nanoseconds() &- last >= 1_000_000_000 { sample() }
    }

    mutating func sample() {
        let now = MonotonicClock.nanoseconds()
        let interval = seconds(from: last, to: now)
        guard interval > 0.05 else { return }
        let deliveries = counters.deliveries.value
        let acknowledged = counters.acknowledged.value
        let histogram = loops.histograms(resetInterval: true).interval
        let point = SeriesPoint(
            second: seconds(from: start, to: now),
            deliveriesPerSecond: Double(deliveries - lastDeliveries) / interval,
            publishesPerSecond: Double(acknowledged - lastAcknowledged) / interval,
            connections: counters.subscribed.value,
            p99Millis: Double(histogram.value(atPercentile: 99)) / 1e6
        )
        points.append(point)
        last = now
        lastDeliveries = deliveries
        lastAcknowledged = acknowledged
        control.progress(
            "\(system) t=\(format(point.second))s deliveries/s=\(Int(point.deliveriesPerSecond)) "
                + "publishes/s=\(Int(point.publishesPerSecond)) p99=\(format(point.p99Millis))ms "
                + "delivered=\(deliveries)/\(counters.expected.value) failures=\(counters.failed.value)"
        )
    }
}

/// A number with at most two decimals, for progress lines and tables.
func format(_ value: Double) -> String {
    guard value.isFinite else { return "\(value)" }
    if value == value.rounded() && abs(value) < 1e15 { return String(Int64(value)) }
    let scaled = (value * 100).rounded() / 100
    return String(scaled)
}
