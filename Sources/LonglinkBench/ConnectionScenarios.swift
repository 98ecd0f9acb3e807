import Glibc
import LonglinkCore
import LonglinkLoop

/// `connect` and `idle`: many connections, opened through the loops' pools.
enum ConnectionScenarios {
    /// `longlink bench connect`: opens `--connections` N as fast as the window allows (512 connecting per loop),
    /// then closes them. Connections per second, connect+handshake latency, failures by reason.
    static func connect(_ context: ScenarioContext, into report: inout BenchReport) throws {
        let parameters = context.parameters
        let count = parameters.connections
        try checkFileLimit(count, into: &report)
        report.runs.append(connectRun(context.endpoint, context: context))
        if context.endpoint.transport != nil && parameters.tls && !context.control.isInterrupted {
            // Every simulated client comes back with the session ticket its first connection got.
            report.runs.append(connectRun(context.endpoint, context: context, phase: ", reconnecting with saved TLS sessions"))
        }
        if let webSocket = context.webSocketEndpoint, !context.control.isInterrupted {
            var run = connectRun(webSocket, context: context)
            WebSocketComparison.annotate(&run, against: report.runs[0], figure: "connections_per_second")
            report.runs.append(run)
        }
    }

    private static func connectRun(_ endpoint: BenchEndpoint, context: ScenarioContext, phase: String = "") -> BenchRun {
        let parameters = context.parameters
        let count = parameters.connections
        let counters = BenchCounters()
        context.loops.resetRecorders()
        let serverPID = context.servers.gateway.pid
        let serverBefore = serverPID.flatMap { ProcessStats.read(pid: $0) }
        let benchBefore = ProcessStats.read(pid: getpid())
        let start = MonotonicClock.nanoseconds()
        open(count, loops: context.loops, window: 512) { index, loopContext, settled in
            ConnectProbe(index: index, endpoint: endpoint, context: loopContext, counters: counters, settled: settled)
        }
        context.control.wait(timeout: parameters.timeoutLimit, interval: .milliseconds(2)) {
            counters.connected.value + counters.failed.value >= count
        }
        let elapsed = seconds(from: start, to: MonotonicClock.nanoseconds())
        let serverStats = context.servers.gateway.stats
        let serverAfter = serverPID.flatMap { ProcessStats.read(pid: $0) }
        let benchAfter = ProcessStats.read(pid: getpid())
        closeAll(context.loops)
        var run = BenchRun(system: "longlink", label: "connect N=\(count)\(endpoint.label)\(phase)")
        run.figures = [
            Figure("connections", Double(count)),
            Figure("connected", Double(counters.connected.value)),
            Figure("failed", Double(counters.failed.value)),
            Figure("seconds", elapsed, "s"),
            Figure("connections_per_second", elapsed > 0 ? Double(counters.connected.value) / elapsed : 0, "/s"),
        ]
        let (full, resumed) = (counters.tlsFull.value, counters.tlsResumed.value)
        if full + resumed > 0 {
            run.figures += [
                Figure("tls_full_handshakes", Double(full)),
                Figure("tls_resumed_handshakes", Double(resumed)),
                Figure("full_handshakes_per_second", elapsed > 0 ? Double(full) / elapsed : 0, "/s"),
                Figure("resumed_handshakes_per_second", elapsed > 0 ? Double(resumed) / elapsed : 0, "/s"),
            ]
        }
        if let serverStats { run.figures.append(Figure("server_rss_bytes", Double(serverStats.residentBytes), "B")) }
        if let serverBefore, let serverAfter, counters.connected.value > 0 {
            // The gateway's CPU per connection (handshakes, connect, close): what the server pays, whatever else
            // shares the cores.
            let cpu = serverAfter.cpuSeconds - serverBefore.cpuSeconds
            run.figures.append(Figure("server_cpu_ms_per_connection", 1000 * cpu / Double(counters.connected.value), "ms"))
            let system = serverAfter.systemSeconds - serverBefore.systemSeconds
            run.figures.append(Figure("server_system_ms_per_connection", 1000 * system / Double(counters.connected.value), "ms"))
        }
        if let benchBefore, let benchAfter, counters.connected.value > 0 {
            // The load generator's own CPU per connection (its client handshakes): on one machine it shares the cores
            // with the gateway, so a client as costly as the server halves what the server can show.
            let cpu = benchAfter.cpuSeconds - benchBefore.cpuSeconds
            run.figures.append(Figure("bench_cpu_ms_per_connection", 1000 * cpu / Double(counters.connected.value), "ms"))
            let system = benchAfter.systemSeconds - benchBefore.systemSeconds
            run.figures.append(Figure("bench_system_ms_per_connection", 1000 * system / Double(counters.connected.value), "ms"))
        }
        run.setConnectLatency(context.loops.histograms().connect)
        run.failures = counters.failureReasons
        return run
    }

    /// `longlink bench idle`: N subscribed connections sit idle; the server's resident memory per connection (RSS
    /// after − RSS before, over N) and its CPU while idle (over `--duration`). With `--against`, the same N idle
    /// SUBSCRIBE connections on Redis.
    static func idle(_ context: ScenarioContext, into report: inout BenchReport) throws {
        let parameters = context.parameters
        try checkFileLimit(parameters.connections, into: &report)
        let gateway = context.servers.gateway
        report.runs.append(idleRun(.longlink(context.endpoint), context: context, pid: gateway.pid))
        if let webSocket = context.webSocketEndpoint, !context.control.isInterrupted {
            var run = idleRun(.longlink(webSocket), context: context, pid: (context.servers.webSocketGateway ?? gateway).pid)
            WebSocketComparison.annotateIdle(&run, against: report.runs[0])
            report.runs.append(run)
        }
        if let redis = context.servers.redis, !context.control.isInterrupted {
            if parameters.tls {
                report.notes.append("--tls: Longlink idles over TLS; the Redis baseline over plain TCP (Debian's hiredis 0.14 has no TLS)")
            }
            var run = idleRun(.redis(redis.address), context: context, pid: redis.pid)
            if parameters.tls { run.label += " over plain TCP (hiredis 0.14 has no TLS)" }
            report.runs.append(run)
        }
        if let longlink = report.runs.first?.figure("server_bytes_per_connection"),
            let redis = report.runs.first(where: { $0.system == "redis" })?.figure("server_bytes_per_connection"), longlink > 0
        {
            report.comparison = Comparison(figure: "server_bytes_per_connection", longlink: longlink, redis: redis, ratio: longlink / redis)
        }
    }

    private static func idleRun(_ system: FanoutSystem, context: ScenarioContext, pid: Int32?) -> BenchRun {
        let parameters = context.parameters
        let count = parameters.connections
        let counters = BenchCounters()
        let names = RouteNames()
        let routes = max(1, parameters.routes)
        context.loops.resetRecorders()
        usleep(300_000)  // let the server settle before the baseline
        let before = pid.flatMap { ProcessStats.read(pid: $0) }
        let clientBefore = ProcessStats.read(pid: getpid())
        let start = MonotonicClock.nanoseconds()
        open(count, loops: context.loops, window: 256) { index, loopContext, settled in
            switch system {
            case .longlink(let endpoint), .orders(let endpoint):
                let subscriber = LonglinkSubscriber(
                    index: index,
                    route: index % routes,
                    routeText: names.route(index % routes),
                    endpoint: endpoint,
                    context: loopContext,
                    counters: counters
                )
                subscriber.onSubscribed = { _ in
                    counters.subscribed.add(1)
                    settled()
                }
                subscriber.onLost = { _ in settled() }
                subscriber.start()
                return subscriber
            case .redis(let address):
                let subscriber = RedisSubscriber(
                    index: index,
                    channel: names.channel(index % routes),
                    address: address,
                    context: loopContext,
                    counters: counters
                )
                subscriber.onSubscribed = { _ in
                    counters.subscribed.add(1)
                    settled()
                }
                subscriber.onLost = { _ in settled() }
                return subscriber
            }
        }
        context.control.wait(timeout: parameters.timeoutLimit, interval: .milliseconds(5)) {
            counters.subscribed.value + counters.failed.value >= count
        }
        let openSeconds = seconds(from: start, to: MonotonicClock.nanoseconds())
        context.control.progress("\(system.name): \(counters.subscribed.value)/\(count) idle subscribed connections in \(format(openSeconds)) s")
        usleep(500_000)
        let loaded = pid.flatMap { ProcessStats.read(pid: $0) }
        let clientLoaded = ProcessStats.read(pid: getpid())
        let idleStart = MonotonicClock.nanoseconds()
        context.control.wait(timeout: parameters.durationLimit, interval: .milliseconds(100)) { false }
        let idleSeconds = seconds(from: idleStart, to: MonotonicClock.nanoseconds())
        let after = pid.flatMap { ProcessStats.read(pid: $0) }
        let stillOpen = counters.subscribed.value - counters.failed.value
        closeAll(context.loops)

        var run = BenchRun(system: system.name, label: "idle N=\(count) subscribed over T=\(routes) routes\(system.transportLabel)")
        let subscribed = counters.subscribed.value
        run.figures = [
            Figure("connections", Double(count)),
            Figure("subscribed", Double(subscribed)),
            Figure("failed", Double(counters.failed.value)),
            Figure("open_after_idle", Double(stillOpen)),
            Figure("open_seconds", openSeconds, "s"),
            Figure("idle_seconds", idleSeconds, "s"),
        ]
        if let before, let loaded, let after, subscribed > 0 {
            run.figures += [
                Figure("server_rss_before_bytes", Double(before.residentBytes), "B"),
                Figure("server_rss_loaded_bytes", Double(loaded.residentBytes), "B"),
                Figure("server_bytes_per_connection", Double(loaded.residentBytes - before.residentBytes) / Double(subscribed), "B"),
                Figure("server_idle_cpu_percent", 100 * (after.cpuSeconds - loaded.cpuSeconds) / max(idleSeconds, 0.001), "%"),
                Figure("server_open_files", Double(loaded.openFiles)),
            ]
        }
        if let clientBefore, let clientLoaded, subscribed > 0 {
            run.figures.append(
                Figure("client_bytes_per_connection", Double(clientLoaded.residentBytes - clientBefore.residentBytes) / Double(subscribed), "B")
            )
        }
        run.setConnectLatency(context.loops.histograms().connect)
        run.failures = counters.failureReasons
        return run
    }

    /// Spreads connections 0..<count over the loops' pools.
    static func open(_ count: Int, loops: BenchLoops, window: Int, factory: @escaping @Sendable (Int, LoopContext, @escaping () -> Void) -> any BenchSubscriber) {
        let loopCount = loops.loops.count
        for (position, loop) in loops.loops.enumerated() {
            let indices = Array(stride(from: position, to: count, by: loopCount))
            loop.execute { context in
                SubscriberPool.of(context, window: window).open(indices) { index, context, settled in
                    factory(index, context, settled)
                }
            }
        }
    }

    /// Closes every pool member on every loop.
    static func closeAll(_ loops: BenchLoops) {
        _ = loops.collect { context in
            context.attachment(SubscriberPool.self)?.closeAll()
            context.detach(SubscriberPool.self)
        }
    }

    /// Notes when the connections wanted exceed what this process (and one gateway process) can hold.
    static func checkFileLimit(_ count: Int, into report: inout BenchReport) throws {
        let limit = ProcessStats.openFileLimit
        if count > limit - 64 {
            throw BenchError(
                "\(count) connections need more than this process's open-file limit of \(limit); "
                    + "use --workers K to spread the clients (one gateway process holds at most its own limit)"
            )
        }
        if count >= 19_000 {
            report.notes.append("\(count) connections: at the per-process open-file limit (\(limit)) of the gateway")
        }
    }
}
