/// The effective options of one invocation after merging default < config file < environment < flag,
/// each value remembering where it came from (what `longlink config check` prints).
public struct ResolvedOptions: Sendable {
    /// One effective value.
    public struct Value: Sendable, Hashable {
        public var values: [String]
        public var source: OptionSource
    }

    /// The command's options, in declaration order.
    public let specs: [OptionSpec]
    /// Effective values by option name (options without default and unset are absent).
    public private(set) var values: [String: Value]
    /// Positional arguments, in order.
    public let positionals: [String]

    init(specs: [OptionSpec], values: [String: Value], positionals: [String]) {
        self.specs = specs
        self.values = values
        self.positionals = positionals
    }

    /// The option's value, or nil when unset.
    public func string(_ name: String) -> String? {
        precondition(specs.contains { $0.name == name }, "option --\(name) is not declared")
        return values[name]?.values.last
    }

    /// The option's value, or a usage error naming it.
    public func required(_ name: String) throws(CommandLineError) -> String {
        guard let value = string(name), !value.isEmpty else { throw CommandLineError("missing --\(name)") }
        return value
    }

    /// Every value of a list option.
    public func list(_ name: String) -> [String] {
        precondition(specs.contains { $0.name == name }, "option --\(name) is not declared")
        return values[name]?.values ?? []
    }

    /// Whether a switch is on.
    public func flag(_ name: String) -> Bool {
        guard let value = string(name) else { return false }
        return ["1", "true", "yes", "on", ""].contains(value.lowercased())
    }

    /// An integer option, or a usage error explaining the expected form.
    public func int(_ name: String) throws(CommandLineError) -> Int? {
        guard let text = string(name) else { return nil }
        guard let value = Int(text.replacingUnderscores) else {
            throw CommandLineError("--\(name) expects a whole number, got '\(text)'")
        }
        return value
    }

    /// A floating-point option.
    public func double(_ name: String) throws(CommandLineError) -> Double? {
        guard let text = string(name) else { return nil }
        guard let value = Double(text) else { throw CommandLineError("--\(name) expects a number, got '\(text)'") }
        return value
    }

    /// A duration option: `250ms`, `10s`, `5m`, `1h`, or plain seconds.
    public func duration(_ name: String) throws(CommandLineError) -> Duration? {
        guard let text = string(name) else { return nil }
        guard let value = DurationParser.parse(text) else {
            throw CommandLineError("--\(name) expects a duration like 250ms, 10s, 5m or 1h, got '\(text)'")
        }
        return value
    }

    /// A byte size option: `1048576`, `64k`, `1m`, `1MiB`.
    public func bytes(_ name: String) throws(CommandLineError) -> Int? {
        guard let text = string(name) else { return nil }
        guard let value = ByteSizeParser.parse(text) else {
            throw CommandLineError("--\(name) expects a size like 65536, 64KiB or 1MiB, got '\(text)'")
        }
        return value
    }

    /// Where the option's value came from.
    public func source(_ name: String) -> OptionSource? { values[name]?.source }
}

extension String {
    var replacingUnderscores: String { String(filter { $0 != "_" }) }
}

/// Parses human durations.
public enum DurationParser {
    /// `250ms`, `10s`, `5m`, `1h`, `1.5s`, or a plain number of seconds.
    public static func parse(_ text: String) -> Duration? {
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
        for (suffix, scale) in units where text.hasSuffix(suffix) {
            guard let number = Double(text.dropLast(suffix.count)), number >= 0 else { return nil }
            return .milliseconds(Int64((number * scale * 1000).rounded()))
        }
        guard let seconds = Double(text), seconds >= 0 else { return nil }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }
}

/// Parses human byte sizes.
public enum ByteSizeParser {
    /// `1048576`, `64k`/`64KiB`/`64KB`, `1m`/`1MiB`, `1g`/`1GiB` (binary multiples).
    public static func parse(_ text: String) -> Int? {
        let lower = text.lowercased()
        let units: [(String, Int)] = [
            ("kib", 1 << 10), ("mib", 1 << 20), ("gib", 1 << 30), ("kb", 1 << 10), ("mb", 1 << 20), ("gb", 1 << 30),
            ("k", 1 << 10), ("m", 1 << 20), ("g", 1 << 30), ("b", 1),
        ]
        for (suffix, scale) in units where lower.hasSuffix(suffix) {
            guard let number = Int(lower.dropLast(suffix.count)), number >= 0 else { return nil }
            return number * scale
        }
        guard let value = Int(lower), value >= 0 else { return nil }
        return value
    }
}
