/// The performance targets of the gateway and store issues, checked against a report's figures.
enum Targets {
    static func check(_ report: BenchReport, parameters: BenchParameters) -> [TargetCheck] {
        var checks: [TargetCheck] = []
        switch parameters.scenario {
        case .store:
            if let memory = report.runs.first(where: { $0.system == "memory" })?.figure("changes_per_second") {
                checks.append(TargetCheck(target: "memory store ≥ 1,000,000 changes/s", measured: memory, met: memory >= 1_000_000))
            }
            if let sqlite = report.runs.first(where: { $0.system == "sqlite-writer" })?.figure("acknowledged_per_second") {
                checks.append(
                    TargetCheck(target: "SQLite group commit ≥ 50,000 acknowledged changes/s", measured: sqlite, met: sqlite >= 50_000)
                )
            }
        case .fanout:
            if let comparison = report.comparison {
                checks.append(
                    TargetCheck(
                        target: "deliveries/s ≥ 1.5 × Redis pub/sub (same workload, same run)",
                        measured: comparison.ratio,
                        met: comparison.ratio >= 1.5
                    )
                )
            }
            let longlink = report.runs.filter { $0.system == "longlink" }
            if let webSocket = longlink.filter(WebSocketComparison.isWebSocket).compactMap({ $0.figure("deliveries_per_second") }).max(),
                let tcp = longlink.filter({ !WebSocketComparison.isWebSocket($0) }).compactMap({ $0.figure("deliveries_per_second") }).max(),
                tcp > 0
            {
                let ratio = webSocket / tcp  // best against best, as against Redis
                checks.append(
                    TargetCheck(target: "WebSocket deliveries/s within 10 % of raw TCP (best against best, same gateway, same run)", measured: ratio, met: ratio >= 0.9)
                )
            }
            if parameters.subscribers >= 10_000 && parameters.rate >= 5_000 && parameters.rate <= 5_500,
                let latency = report.runs.first(where: { $0.system == "longlink" })?.latency
            {
                let p99 = Double(latency.p99) / 1e6
                checks.append(TargetCheck(target: "p99 publish→deliver < 1 ms at 10,000 subscribers, 5,000 changes/s", measured: p99, met: p99 < 1))
            }
        case .idle:
            if let extra = report.runs.compactMap({ $0.figure("server_extra_bytes_per_connection") }).first {
                checks.append(
                    TargetCheck(target: "WebSocket idle connection ≤ 150 B of server RSS more than raw TCP", measured: extra, met: extra <= 150)
                )
            }
            if let perConnection = report.runs.first(where: { $0.system == "longlink" })?.figure("server_bytes_per_connection") {
                checks.append(
                    TargetCheck(
                        target: "idle subscribed connection ≤ 768 B of server RSS (measured at 19,000)",
                        measured: perConnection,
                        met: perConnection <= 768
                    )
                )
            }
        case .profile:
            // Issue 19: instructions per publish→delivery against Redis's, counted by callgrind in the same run.
            let limits: [(ProfileWorkload.Kind, String, Double)] = [
                (.manyRoutes, "many routes: user-space instructions per publish→delivery ≤ 1.5 × Redis pub/sub (callgrind, same run)", 1.5),
                (.broadcast, "broadcast: user-space instructions per delivery ≤ 0.7 × Redis pub/sub (callgrind, same run)", 0.7),
            ]
            for (kind, target, limit) in limits {
                let title = "profile " + ProfileWorkload(kind).title(subscribers: parameters.subscribers)
                guard let ratio = report.runs.first(where: { $0.system == "longlink" && $0.label == title })?.figure("ratio_to_redis")
                else { continue }
                checks.append(TargetCheck(target: target, measured: ratio, met: ratio <= limit))
            }
        default:
            break
        }
        return checks
    }
}
