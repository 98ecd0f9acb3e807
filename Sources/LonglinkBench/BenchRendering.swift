/// Text renderings of a report: the final table, and the time series as CSV.
public enum BenchRendering {
    /// The human-readable final table.
    public static func table(_ report: BenchReport) -> String {
        var lines: [String] = []
        let machine = report.machine
        lines.append("longlink bench \(report.scenario)\(report.interrupted ? " (interrupted: figures so far)" : "")")
        lines.append(
            "machine: \(machine.cores) cores (\(machine.cpu)), \(machine.memoryBytes >> 20) MiB, "
                + "open-file limit \(machine.openFileLimit), Linux \(machine.kernel)"
        )
        for run in report.runs {
            lines.append("")
            lines.append("[\(run.system)] \(run.label)")
            for figure in run.figures {
                lines.append("  " + pad(figure.name, 28) + display(figure))
            }
            if let latency = run.latency {
                lines.append("  " + pad("latency (publish→deliver)", 28) + summary(latency))
            }
            if let connect = run.connectLatency {
                lines.append("  " + pad("connect+handshake", 28) + summary(connect))
            }
            for file in run.files ?? [] {
                lines.append("  " + pad("file", 28) + file)
            }
            for (reason, count) in run.failures.sorted(by: { $0.value > $1.value }) {
                lines.append("  " + pad("failure", 28) + "\(count) × \(reason)")
            }
        }
        if let comparison = report.comparison {
            lines.append("")
            lines.append(
                "longlink / redis \(comparison.figure): \(format(comparison.longlink)) / \(format(comparison.redis)) = "
                    + "\(format(comparison.ratio))×"
            )
        }
        if !report.targets.isEmpty {
            lines.append("")
            for check in report.targets {
                lines.append("target \(check.met ? "MET" : "NOT MET"): \(check.target) (measured \(format(check.measured)))")
            }
        }
        for note in report.notes { lines.append("note: \(note)") }
        return lines.joined(separator: "\n")
    }

    /// The time series of every run: `system,label,second,deliveries_per_second,publishes_per_second,connections,p99_ms`.
    public static func csv(_ report: BenchReport) -> String {
        var lines = ["system,run,second,deliveries_per_second,publishes_per_second,connections,p99_ms"]
        for (index, run) in report.runs.enumerated() {
            for point in run.series {
                lines.append(
                    "\(run.system),\(index),\(format(point.second)),\(format(point.deliveriesPerSecond)),"
                        + "\(format(point.publishesPerSecond)),\(point.connections),\(format(point.p99Millis))"
                )
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func summary(_ latency: LatencySummary) -> String {
        "p50 \(millis(latency.p50)) p90 \(millis(latency.p90)) p99 \(millis(latency.p99)) "
            + "p99.9 \(millis(latency.p999)) max \(millis(latency.max)) ms (n=\(latency.count))"
    }

    static func millis(_ nanoseconds: UInt64) -> String {
        let value = Double(nanoseconds) / 1e6
        return value < 10 ? String((value * 1000).rounded() / 1000) : format(value)
    }

    static func display(_ figure: Figure) -> String {
        switch figure.unit {
        case "B" where figure.value >= 1_048_576: return "\(format(figure.value / 1_048_576)) MiB"
        case "/s": return "\(grouped(figure.value))/s"
        default: return "\(format(figure.value))\(figure.unit.isEmpty ? "" : " \(figure.unit)")"
        }
    }

    /// `1234567.8` → `1,234,568`.
    static func grouped(_ value: Double) -> String {
        let whole = Int64(value.rounded())
        let digits = String(whole.magnitude)
        var result = ""
        for (offset, character) in digits.enumerated() {
            if offset > 0 && (digits.count - offset) % 3 == 0 { result.append(",") }
            result.append(character)
        }
        return (whole < 0 ? "-" : "") + result
    }

    static func pad(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(1, width - text.count))
    }
}
