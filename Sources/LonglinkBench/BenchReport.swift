import Foundation
import Glibc
import LonglinkJSON
import LonglinkLoop

/// The outcome of one `longlink bench` invocation: what ran, on what machine, and the figures of each run.
/// `--json` prints it (schema `longlink-bench/1`); the table, CSV and SVG are rendered from it.
public struct BenchReport: Sendable, Codable {
    /// The schema identifier.
    public var schema = "longlink-bench/1"
    /// The scenario.
    public var scenario: String
    /// The command line that produced it.
    public var command: String
    /// The machine.
    public var machine: MachineInfo
    /// One entry per run (Longlink and Redis alternate when comparing).
    public var runs: [BenchRun]
    /// Longlink against Redis, when `--against` was given.
    public var comparison: Comparison?
    /// Targets from the gateway and store issues, checked against the figures.
    public var targets: [TargetCheck]
    /// Whether Ctrl-C cut the run short (the figures are what was measured until then).
    public var interrupted: Bool
    /// Remarks (limits hit, skipped parts).
    public var notes: [String]

    /// Creates a report.
    public init(scenario: String, command: String, runs: [BenchRun] = [], interrupted: Bool = false) {
        self.scenario = scenario
        self.command = command
        self.machine = MachineInfo.current()
        self.runs = runs
        self.comparison = nil
        self.targets = []
        self.interrupted = interrupted
        self.notes = []
    }

    /// The report as pretty, key-sorted JSON.
    public func jsonText() -> String {
        guard let value = try? JSONValue.encode(self) else { return "{}" }
        return value.prettyText(sortedKeys: true)
    }
}

/// The machine a report was measured on.
public struct MachineInfo: Sendable, Codable, Hashable {
    /// Online CPUs.
    public var cores: Int
    /// Physical memory in bytes.
    public var memoryBytes: Int
    /// This process's open-file limit (soft).
    public var openFileLimit: Int
    /// Kernel release (`uname -r`).
    public var kernel: String
    /// CPU model name.
    public var cpu: String

    /// This machine.
    public static func current() -> MachineInfo {
        var names = utsname()
        uname(&names)
        let release = withUnsafeBytes(of: &names.release) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        let cpuinfo = ProcFile.read("/proc/cpuinfo") ?? ""
        let model = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .map { String($0.split(separator: ":", maxSplits: 1).last ?? "").trimmingCharacters(in: .whitespaces) } ?? "unknown"
        return MachineInfo(
            cores: sysconf(Int32(_SC_NPROCESSORS_ONLN)),
            memoryBytes: sysconf(Int32(_SC_PHYS_PAGES)) * sysconf(Int32(_SC_PAGESIZE)),
            openFileLimit: ProcessStats.openFileLimit,
            kernel: release,
            cpu: model
        )
    }
}

/// One measured run against one system.
public struct BenchRun: Sendable, Codable {
    /// `longlink`, `redis`, `memory`, `sqlite`, `protobuf`, ...
    public var system: String
    /// What was measured, e.g. `fanout S=1000 T=100 M=10000 R=0 P=64`.
    public var label: String
    /// The headline numbers, in display order.
    public var figures: [Figure]
    /// Publish→deliver latency (nanoseconds), when the scenario delivers.
    public var latency: LatencySummary?
    /// Connect + handshake latency (nanoseconds), when the scenario connects.
    public var connectLatency: LatencySummary?
    /// Failures by reason.
    public var failures: [String: Int]
    /// One point per second of the measured phase.
    public var series: [SeriesPoint]
    /// The latency histogram's non-empty buckets as `[lowest value ns, count]` (for charts and merging).
    public var latencyBuckets: [[UInt64]]
    /// The connect-latency histogram's non-empty buckets as `[lowest value ns, count]` (merged over `--workers`).
    public var connectBuckets: [[UInt64]]?
    /// Files the run wrote (bench profile: the callgrind outputs its figures were read from).
    public var files: [String]?

    /// Creates a run.
    public init(system: String, label: String, figures: [Figure] = []) {
        self.system = system
        self.label = label
        self.figures = figures
        self.latency = nil
        self.connectLatency = nil
        self.failures = [:]
        self.series = []
        self.latencyBuckets = []
        self.connectBuckets = nil
        self.files = nil
    }

    /// Stores a connect-latency histogram's summary and buckets.
    mutating func setConnectLatency(_ histogram: LatencyHistogram) {
        connectLatency = LatencySummary(histogram)
        connectBuckets = histogram.buckets.map { [$0.value, $0.count] }
    }

    /// The value of the figure named `name`.
    public func figure(_ name: String) -> Double? { figures.first { $0.name == name }?.value }

    /// Stores a histogram's summary and buckets.
    mutating func setLatency(_ histogram: LatencyHistogram) {
        latency = histogram.count > 0 ? LatencySummary(histogram) : nil
        latencyBuckets = histogram.buckets.map { [$0.value, $0.count] }
    }
}

/// One named number.
public struct Figure: Sendable, Codable, Hashable {
    /// Machine name, e.g. `deliveries_per_second`.
    public var name: String
    /// The value.
    public var value: Double
    /// Unit for display (`/s`, `B`, `ms`, ``).
    public var unit: String

    /// Creates a figure.
    public init(_ name: String, _ value: Double, _ unit: String = "") {
        self.name = name
        self.value = value
        self.unit = unit
    }
}

/// One second of a run.
public struct SeriesPoint: Sendable, Codable, Hashable {
    /// Seconds since the measured phase began.
    public var second: Double
    /// Deliveries in this interval, per second.
    public var deliveriesPerSecond: Double
    /// Publishes acknowledged in this interval, per second.
    public var publishesPerSecond: Double
    /// Open connections.
    public var connections: Int
    /// p99 publish→deliver latency in this interval, in milliseconds.
    public var p99Millis: Double

    /// Creates a point.
    public init(second: Double, deliveriesPerSecond: Double, publishesPerSecond: Double, connections: Int, p99Millis: Double) {
        self.second = second
        self.deliveriesPerSecond = deliveriesPerSecond
        self.publishesPerSecond = publishesPerSecond
        self.connections = connections
        self.p99Millis = p99Millis
    }
}

/// Longlink's figure against Redis's, from the same invocation.
public struct Comparison: Sendable, Codable, Hashable {
    /// The figure compared.
    public var figure: String
    /// Longlink's value (best round).
    public var longlink: Double
    /// Redis's value (best round).
    public var redis: Double
    /// longlink / redis.
    public var ratio: Double
}

/// A target from the issues, checked.
public struct TargetCheck: Sendable, Codable, Hashable {
    /// What the target says, e.g. `deliveries/s ≥ 1.5 × Redis`.
    public var target: String
    /// The measured value it was checked against.
    public var measured: Double
    /// Whether it is met.
    public var met: Bool
}
