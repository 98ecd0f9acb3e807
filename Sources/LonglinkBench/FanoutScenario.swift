/// `longlink bench fanout`: S subscribers over T routes, M changes at rate R with P-byte payloads; with
/// `--against`, the same workload through Redis pub/sub, alternating Longlink and Redis `--rounds` times.
enum FanoutScenario {
    static func run(_ context: ScenarioContext, into report: inout BenchReport) throws {
        let parameters = context.parameters
        let workload = parameters.workload
        var runner = FanoutRunner(
            loops: context.loops,
            control: context.control,
            duration: parameters.durationLimit,
            timeout: parameters.timeoutLimit
        )
        let (reader, fallback) = try BenchReader.resolve(parameters.reader, paced: workload.rate > 0)
        runner.reader = reader
        runner.readerBatch = UInt32(parameters.readerBatch)
        runner.readerWaitNanoseconds = Int64((parameters.readerWait * 1e9).rounded())
        if let fallback {
            report.notes.append(fallback)
            context.control.progress("note: \(fallback)")
        } else if reader == .ioUring {
            report.notes.append(
                "subscribers read through io_uring once subscribed (multishot receive, provided buffers, DEFER_TASKRUN; "
                    + (runner.readerBatch > 1
                        ? "each wake-up waits for up to \(runner.readerBatch) completions, or for one once "
                            + "\(runner.readerWaitNanoseconds / 1000) µs passed, "
                            + "so a delivery is timed up to that much late); "
                        : "the loop sleeps in the ring until the first completion and takes all that are ready); ")
                    + "plain TCP only, TLS and WebSocket subscribers keep epoll"
            )
        }
        var label = "fanout S=\(workload.subscribers) T=\(workload.routes) M=\(workload.messages) R=\(format(workload.rate)) P=\(workload.payload)"
        let publishTo = context.servers.publishGateway.map { node in
            var endpoint = context.endpoint
            endpoint.address = node.address
            return endpoint
        }
        if let publishTo { label += " publisher→\(publishTo.address)" }
        let redisLabel = label + (parameters.tls ? " over plain TCP (hiredis 0.14 has no TLS)" : "")
        if parameters.tls && context.servers.redis != nil {
            report.notes.append("--tls: Longlink runs over TLS; the Redis baseline runs over plain TCP (Debian's hiredis 0.14 has no TLS)")
            context.control.progress("note: the Redis side runs over plain TCP (hiredis 0.14 has no TLS); Longlink over TLS")
        }
        for _ in 0..<parameters.rounds {
            guard !context.control.isInterrupted else { break }
            let gateway = context.servers.gateway
            let tcp = runner.run(.longlink(context.endpoint), workload: workload, label: label, serverPID: gateway.pid, publishTo: publishTo)
            report.runs.append(tcp)
            if let webSocket = context.webSocketEndpoint, !context.control.isInterrupted {
                var run = runner.run(.longlink(webSocket), workload: workload, label: label, serverPID: gateway.pid)
                WebSocketComparison.annotate(&run, against: tcp, figure: "deliveries_per_second")
                report.runs.append(run)
            }
            if let redis = context.servers.redis, !context.control.isInterrupted {
                report.runs.append(runner.run(.redis(redis.address), workload: workload, label: redisLabel, serverPID: redis.pid))
            }
        }
        report.comparison = compare(report.runs, figure: "deliveries_per_second")
    }

    /// Best Longlink round against best Redis round.
    static func compare(_ runs: [BenchRun], figure: String) -> Comparison? {
        let longlink = runs.filter { $0.system == "longlink" && !WebSocketComparison.isWebSocket($0) }.compactMap { $0.figure(figure) }.max()
        let redis = runs.filter { $0.system == "redis" }.compactMap { $0.figure(figure) }.max()
        guard let longlink, let redis, redis > 0 else { return nil }
        return Comparison(figure: figure, longlink: longlink, redis: redis, ratio: longlink / redis)
    }
}
