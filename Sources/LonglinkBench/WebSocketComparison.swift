/// `--transport ws`: each scenario runs over raw TCP first, then over WebSocket on the same gateway, and the
/// WebSocket run carries its ratio to the TCP run (throughput) or its extra bytes per connection (idle).
enum WebSocketComparison {
    /// Adds `<figure>_ratio_to_tcp`: the WebSocket run's figure over the TCP run's.
    static func annotate(_ run: inout BenchRun, against tcp: BenchRun, figure: String) {
        guard let base = tcp.figure(figure), base > 0, let value = run.figure(figure) else { return }
        run.figures.append(Figure("\(figure)_ratio_to_tcp", value / base))
    }

    /// Adds `server_extra_bytes_per_connection`: the WebSocket run's server bytes per idle connection minus the
    /// TCP run's.
    static func annotateIdle(_ run: inout BenchRun, against tcp: BenchRun) {
        guard let base = tcp.figure("server_bytes_per_connection"), let value = run.figure("server_bytes_per_connection") else { return }
        run.figures.append(Figure("server_extra_bytes_per_connection", value - base, "B"))
    }

    /// Whether a run went over WebSocket (its label says so).
    static func isWebSocket(_ run: BenchRun) -> Bool { run.label.contains(" over WebSocket") }
}
