import Synchronization

/// Severity of a log line.
public enum LogLevel: Int, Comparable, Sendable, CaseIterable, CustomStringConvertible {
    case trace, debug, info, notice, warning, error

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }

    /// Parses `trace`, `debug`, `info`, `notice`, `warning` or `error`.
    public init?(name: String) {
        guard let level = LogLevel.allCases.first(where: { $0.description == name.lowercased() }) else { return nil }
        self = level
    }

    public var description: String {
        switch self {
        case .trace: "trace"
        case .debug: "debug"
        case .info: "info"
        case .notice: "notice"
        case .warning: "warning"
        case .error: "error"
        }
    }
}

/// One log event handed to a sink: already past the level check, so formatting happens only here.
public struct LogRecord: Sendable {
    /// Severity.
    public var level: LogLevel
    /// The subsystem that logged (e.g. `gateway`, `store`).
    public var label: String
    /// The message.
    public var message: String
    /// Structured fields (connection id, user id, order id, ...).
    public var metadata: [(String, String)]
}

/// Where log records go (stderr as text or JSON lines, a test's collector, ...).
public protocol LogSink: Sendable {
    /// Writes one record. Called from any thread.
    func write(_ record: LogRecord)
}

/// A minimum log level that can change while the process runs (SIGHUP, the admin API), shared by every logger
/// derived from one root with `labeled(_:)`. Reading it is one relaxed atomic load.
public final class LogLevelSwitch: Sendable {
    private let raw: Atomic<Int>

    /// A switch starting at `level`.
    public init(_ level: LogLevel) { raw = Atomic(level.rawValue) }

    /// The current minimum level.
    public var level: LogLevel { LogLevel(rawValue: raw.load(ordering: .relaxed)) ?? .info }

    /// Changes the minimum level for every logger sharing this switch.
    public func set(_ level: LogLevel) { raw.store(level.rawValue, ordering: .relaxed) }
}

/// A leveled logger: a label, a minimum level and a sink. Messages and metadata are autoclosures, so nothing
/// is formatted when the level is off: the hot path pays one integer comparison.
public struct Logger: Sendable {
    /// The subsystem name.
    public var label: String
    /// Records below this level are dropped before anything is formatted.
    public var level: LogLevel
    /// Destination.
    public var sink: any LogSink
    /// When set, the minimum level is read from here (and `level` is ignored), so it can change at run time.
    public var levelSwitch: LogLevelSwitch?

    public init(label: String, level: LogLevel = .info, sink: any LogSink, levelSwitch: LogLevelSwitch? = nil) {
        self.label = label
        self.level = level
        self.sink = sink
        self.levelSwitch = levelSwitch
    }

    /// The minimum level in force now.
    public var effectiveLevel: LogLevel { levelSwitch?.level ?? level }

    /// The same logger (sink, level, switch) under another label: how subsystems get their own.
    public func labeled(_ label: String) -> Logger {
        var logger = self
        logger.label = label
        return logger
    }

    /// Logs `message` at `level` when enabled.

    public func log(
        _ level: LogLevel,
        _ message: @autoclosure () -> String,
        _ metadata: @autoclosure () -> [(String, String)] = []
    ) {
        guard level >= (levelSwitch?.level ?? self.level) else { return }
        sink.write(LogRecord(level: level, label: label, message: message(), metadata: metadata()).redacted())
    }

    public func trace(_ m: @autoclosure () -> String, _ md: @autoclosure () -> [(String, String)] = []) {
        log(.trace, m(), md())
    }
    public func debug(_ m: @autoclosure () -> String, _ md: @autoclosure () -> [(String, String)] = []) {
        log(.debug, m(), md())
    }
    public func info(_ m: @autoclosure () -> String, _ md: @autoclosure () -> [(String, String)] = []) {
        log(.info, m(), md())
    }
    public func notice(_ m: @autoclosure () -> String, _ md: @autoclosure () -> [(String, String)] = []) {
        log(.notice, m(), md())
    }
    public func warning(_ m: @autoclosure () -> String, _ md: @autoclosure () -> [(String, String)] = []) {
        log(.warning, m(), md())
    }
    public func error(_ m: @autoclosure () -> String, _ md: @autoclosure () -> [(String, String)] = []) {
        log(.error, m(), md())
    }

    /// A logger that drops everything.
    public static let disabled = Logger(label: "", level: .error, sink: NullLogSink())
}

/// A sink that drops every record.
public struct NullLogSink: LogSink {
    public init() {}
    public func write(_ record: LogRecord) {}
}
