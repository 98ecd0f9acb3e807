public import LonglinkGateway

/// Builds the Prometheus text exposition format (version 0.0.4): `# HELP` and `# TYPE` per family, then its
/// samples, labels escaped. Families are written in the order they are added.
public struct PrometheusText: Sendable {
    /// The text so far.
    public private(set) var text = ""

    /// An empty exposition.
    public init() {}

    /// The content type to serve it with.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// A family with one sample per label set.
    public mutating func family(
        _ name: String,
        type: String,
        help: String,
        _ samples: [(labels: [(String, String)], value: Double)]
    ) {
        text += "# HELP \(name) \(Self.escapeHelp(help))\n# TYPE \(name) \(type)\n"
        for sample in samples { line(name, sample.labels, sample.value) }
    }

    /// A counter without labels (the name should end in `_total`).
    public mutating func counter(_ name: String, help: String, _ value: Int) {
        family(name, type: "counter", help: help, [([], Double(value))])
    }

    /// A gauge without labels.
    public mutating func gauge(_ name: String, help: String, _ value: Double) {
        family(name, type: "gauge", help: help, [([], value)])
    }

    /// A histogram family: `_bucket` per bound (cumulative) and `+Inf`, then `_sum` and `_count`, per label set.
    public mutating func histogram(_ name: String, help: String, _ series: [(labels: [(String, String)], MetricHistogram)]) {
        text += "# HELP \(name) \(Self.escapeHelp(help))\n# TYPE \(name) histogram\n"
        for (labels, histogram) in series {
            let snapshot = histogram.snapshot
            for (index, bound) in histogram.bounds.enumerated() {
                line(name + "_bucket", labels + [("le", Self.number(Double(bound) * histogram.scale))], Double(snapshot.cumulative[index]))
            }
            line(name + "_bucket", labels + [("le", "+Inf")], Double(snapshot.count))
            line(name + "_sum", labels, snapshot.sum)
            line(name + "_count", labels, Double(snapshot.count))
        }
    }

    private mutating func line(_ name: String, _ labels: [(String, String)], _ value: Double) {
        text += name
        if !labels.isEmpty {
            text += "{"
            for (index, (key, value)) in labels.enumerated() {
                if index > 0 { text += "," }
                text += "\(key)=\"\(Self.escapeLabel(value))\""
            }
            text += "}"
        }
        text += " \(Self.number(value))\n"
    }

    /// A sample value: integers without a fraction, `+Inf`/`-Inf`/`NaN` spelled as Prometheus wants.
    static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value.rounded() == value && abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    private static func escapeLabel(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(character)
            }
        }
        return out
    }

    private static func escapeHelp(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            default: out.append(character)
            }
        }
        return out
    }
}
