import Glibc

/// Hand-written SVG charts of a report: the latency distribution (percentile on a log "nines" axis, one line
/// per run) and, below it, deliveries per second over time. No dependencies; the text is plain SVG 1.1.
public enum BenchSVG {
    static let palette = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"]

    /// Both charts stacked in one SVG document (latency only when a run has latencies; throughput only when a run
    /// has a series). `title` heads the document.
    public static func chart(_ report: BenchReport, title: String? = nil) -> String {
        let width = 760.0
        let panelHeight = 300.0
        let hasLatency = report.runs.contains { !$0.latencyBuckets.isEmpty }
        let hasSeries = report.runs.contains { !$0.series.isEmpty }
        let hasConnectLatency = !hasLatency && report.runs.contains { !($0.connectBuckets ?? []).isEmpty }
        let headline = headlineBars(report)
        let barsHeight = headline.map { 50 + Double($0.values.count) * 30 } ?? 0
        let panels = (hasLatency || hasConnectLatency ? 1 : 0) + (hasSeries ? 1 : 0)
        let height = 40 + barsHeight + Double(panels) * (panelHeight + 30) + (panels == 0 && headline == nil ? 60 : 0)
        var body = ""
        var top = 40.0
        if let headline {
            body += barsPanel(title: headline.title, values: headline.values, y: top + 10, width: width)
            top += barsHeight
        }
        if hasLatency {
            body += latencyPanel(report.runs, x: 70, y: top, width: width - 110, height: panelHeight - 60)
            top += panelHeight + 30
        } else if hasConnectLatency {
            // connect and idle: the connect + handshake distribution, drawn like publish→deliver.
            var connectRuns = report.runs
            for index in connectRuns.indices {
                connectRuns[index].latencyBuckets = connectRuns[index].connectBuckets ?? []
                connectRuns[index].latency = connectRuns[index].connectLatency
            }
            body += latencyPanel(
                connectRuns, x: 70, y: top, width: width - 110, height: panelHeight - 60,
                title: "connect + handshake latency by percentile"
            )
            top += panelHeight + 30
        }
        if hasSeries {
            body += seriesPanel(report.runs, x: 70, y: top, width: width - 110, height: panelHeight - 60)
        }
        if panels == 0 && headline == nil {
            body += text(width / 2, 80, "no figures to draw in this report", anchor: "middle")
        }
        let heading = title ?? "longlink bench \(report.scenario)"
        return """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" \
            viewBox="0 0 \(Int(width)) \(Int(height))" font-family="Helvetica, Arial, sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            \(text(width / 2, 22, escape(heading), anchor: "middle", size: 15, weight: "bold"))
            \(body)</svg>

            """
    }

    /// Percentile (x, as nines: 0, 90, 99, 99.9, 99.99) against latency in ms (y, linear from 0).
    static func latencyPanel(
        _ runs: [BenchRun], x: Double, y: Double, width: Double, height: Double,
        title: String = "publish→deliver latency by percentile"
    ) -> String {
        let nines = 4.0  // up to 99.99 %
        var curves: [(String, [(Double, Double)])] = []
        var maxMillis = 0.0
        for run in runs where !run.latencyBuckets.isEmpty {
            let histogram = LatencyHistogram(
                buckets: run.latencyBuckets.map { ($0[0], $0[1]) },
                minimum: run.latency?.min ?? 0,
                maximum: run.latency?.max ?? 0,
                sum: 0
            )
            var points: [(Double, Double)] = []
            for step in 0...80 {
                let position = nines * Double(step) / 80  // 0…4 nines
                let percentile = 100 * (1 - pow(10, -position))
                let millis = Double(histogram.value(atPercentile: percentile)) / 1e6
                points.append((position, millis))
                maxMillis = max(maxMillis, millis)
            }
            curves.append(("\(run.system) #\(curves.count + 1)", points))
        }
        let top = niceCeiling(maxMillis)
        var svg = frame(x: x, y: y, width: width, height: height, title: title)
        for tick in 0...4 {
            let value = top * Double(tick) / 4
            let ty = y + height - height * Double(tick) / 4
            svg += line(x, ty, x + width, ty, color: "#e0e0e0")
            svg += text(x - 6, ty + 4, "\(format(value)) ms", anchor: "end")
        }
        for (index, label) in ["0 %", "90 %", "99 %", "99.9 %", "99.99 %"].enumerated() {
            let tx = x + width * Double(index) / nines
            svg += line(tx, y, tx, y + height, color: "#e0e0e0")
            svg += text(tx, y + height + 16, label, anchor: "middle")
        }
        for (index, curve) in curves.enumerated() {
            let color = palette[index % palette.count]
            let path = curve.1.map { point in
                "\(rounded(x + width * point.0 / nines)),\(rounded(y + height - height * point.1 / max(top, 1e-9)))"
            }
            svg += "<polyline fill=\"none\" stroke=\"\(color)\" stroke-width=\"2\" points=\"\(path.joined(separator: " "))\"/>\n"
            svg += legend(x: x + 10, y: y + 16 + Double(index) * 16, color: color, label: curve.0)
        }
        return svg
    }

    /// Deliveries per second (y) over seconds (x), one line per run.
    static func seriesPanel(_ runs: [BenchRun], x: Double, y: Double, width: Double, height: Double) -> String {
        let series = runs.filter { !$0.series.isEmpty }
        let maxSecond = series.flatMap { $0.series.map(\.second) }.max() ?? 1
        let maxRate = niceCeiling(series.flatMap { $0.series.map(\.deliveriesPerSecond) }.max() ?? 1)
        var svg = frame(x: x, y: y, width: width, height: height, title: "deliveries per second over time")
        for tick in 0...4 {
            let value = maxRate * Double(tick) / 4
            let ty = y + height - height * Double(tick) / 4
            svg += line(x, ty, x + width, ty, color: "#e0e0e0")
            svg += text(x - 6, ty + 4, BenchRendering.grouped(value), anchor: "end")
        }
        for tick in 0...4 {
            let value = maxSecond * Double(tick) / 4
            svg += text(x + width * Double(tick) / 4, y + height + 16, "\(format(value)) s", anchor: "middle")
        }
        for (index, run) in series.enumerated() {
            let color = palette[index % palette.count]
            let path = run.series.map { point in
                "\(rounded(x + width * point.second / max(maxSecond, 1e-9))),\(rounded(y + height - height * point.deliveriesPerSecond / max(maxRate, 1e-9)))"
            }
            svg += "<polyline fill=\"none\" stroke=\"\(color)\" stroke-width=\"2\" points=\"\(path.joined(separator: " "))\"/>\n"
            svg += legend(x: x + 10, y: y + 16 + Double(index) * 16, color: color, label: "\(run.system) #\(index + 1)")
        }
        return svg
    }

    /// The headline figure of a scenario, one bar per run: deliveries/s, changes/s, bytes per connection, ...
    static func headlineBars(_ report: BenchReport) -> (title: String, values: [(label: String, value: Double)])? {
        let names = [
            ("deliveries_per_second", "deliveries per second"), ("acknowledged_per_second", "acknowledged changes per second"),
            ("changes_per_second", "changes per second"), ("server_bytes_per_connection", "server bytes per idle connection"),
            ("connections_per_second", "connections per second"), ("encodes_per_second", "push encodes per second"),
        ]
        var values: [(label: String, value: Double)] = []
        var title = ""
        for (index, run) in report.runs.enumerated() {
            guard let (name, text) = names.first(where: { run.figure($0.0) != nil }) else { continue }
            if title.isEmpty { title = text }
            values.append(("\(run.system) #\(index + 1)", run.figure(name) ?? 0))
        }
        return values.isEmpty ? nil : (title, values)
    }

    static func barsPanel(title: String, values: [(label: String, value: Double)], y: Double, width: Double) -> String {
        let barHeight = 20.0
        let maxValue = niceCeiling(values.map(\.value).max() ?? 1)
        let left = 170.0
        let span = width - left - 140
        var body = text(width / 2, y, escape(title), anchor: "middle", weight: "bold")
        for (index, entry) in values.enumerated() {
            let top = y + 12 + Double(index) * (barHeight + 10)
            let length = span * entry.value / max(maxValue, 1e-9)
            body += text(left - 8, top + barHeight / 2 + 4, escape(entry.label), anchor: "end")
            body += "<rect x=\"\(left)\" y=\"\(top)\" width=\"\(rounded(length))\" height=\"\(barHeight)\" fill=\"\(palette[index % palette.count])\"/>\n"
            body += text(left + length + 6, top + barHeight / 2 + 4, BenchRendering.grouped(entry.value))
        }
        return body
    }

    /// A bar chart of one figure across runs (e.g. deliveries/s of Longlink and Redis), for BENCHMARKS.md.
    public static func bars(title: String, unit: String, values: [(label: String, value: Double)]) -> String {
        let width = 640.0
        let barHeight = 28.0
        let height = 60 + Double(values.count) * (barHeight + 12)
        let maxValue = niceCeiling(values.map(\.value).max() ?? 1)
        let left = 170.0
        let span = width - left - 110
        var body = text(width / 2, 22, escape(title), anchor: "middle", size: 15, weight: "bold")
        for (index, entry) in values.enumerated() {
            let top = 44 + Double(index) * (barHeight + 12)
            let length = span * entry.value / max(maxValue, 1e-9)
            body += text(left - 8, top + barHeight / 2 + 4, escape(entry.label), anchor: "end")
            body += "<rect x=\"\(left)\" y=\"\(top)\" width=\"\(rounded(length))\" height=\"\(barHeight)\" fill=\"\(palette[index % palette.count])\"/>\n"
            body += text(left + length + 6, top + barHeight / 2 + 4, "\(BenchRendering.grouped(entry.value)) \(escape(unit))")
        }
        return """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" \
            viewBox="0 0 \(Int(width)) \(Int(height))" font-family="Helvetica, Arial, sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            \(body)</svg>

            """
    }

    // MARK: Pieces

    private static func frame(x: Double, y: Double, width: Double, height: Double, title: String) -> String {
        "<rect x=\"\(x)\" y=\"\(y)\" width=\"\(width)\" height=\"\(height)\" fill=\"none\" stroke=\"#888\"/>\n"
            + text(x + width / 2, y - 8, escape(title), anchor: "middle", weight: "bold")
    }

    private static func legend(x: Double, y: Double, color: String, label: String) -> String {
        line(x, y - 4, x + 18, y - 4, color: color, width: 3) + text(x + 24, y, escape(label))
    }

    private static func line(_ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double, color: String, width: Double = 1) -> String {
        "<line x1=\"\(rounded(x1))\" y1=\"\(rounded(y1))\" x2=\"\(rounded(x2))\" y2=\"\(rounded(y2))\" stroke=\"\(color)\" stroke-width=\"\(width)\"/>\n"
    }

    private static func text(
        _ x: Double,
        _ y: Double,
        _ content: String,
        anchor: String = "start",
        size: Int = 12,
        weight: String = "normal"
    ) -> String {
        "<text x=\"\(rounded(x))\" y=\"\(rounded(y))\" text-anchor=\"\(anchor)\" font-size=\"\(size)\" font-weight=\"\(weight)\">\(content)</text>\n"
    }

    static func escape(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            default: result.append(character)
            }
        }
        return result
    }

    private static func rounded(_ value: Double) -> String { String((value * 10).rounded() / 10) }

    /// 1, 2 or 5 × a power of ten at or above `value`.
    static func niceCeiling(_ value: Double) -> Double {
        guard value > 0 else { return 1 }
        var magnitude = 1.0
        while magnitude * 10 <= value { magnitude *= 10 }
        while magnitude > value { magnitude /= 10 }
        for step in [1.0, 2.0, 5.0, 10.0] where step * magnitude >= value { return step * magnitude }
        return 10 * magnitude
    }
}
