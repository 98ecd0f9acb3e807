/// One `longlink` subcommand: its name, help and options, and what it does. Commands are values, so the
/// dispatcher and tests can list and run them without a process.
public struct Command: Sendable {
    /// The word after `longlink` (`serve`, `publish`, ...).
    public var name: String
    /// One line for the command list.
    public var summary: String
    /// Usage synopsis after the command name, e.g. `[options] ROUTE...`.
    public var usage: String
    /// Longer help printed by `--help`, below the synopsis.
    public var details: String
    /// The most positional arguments it takes (0 for commands that take none); nil when the command checks them
    /// itself. Extra arguments are a usage error, not silently ignored (`publish --order 1 created` is a mistake).
    public var maximumPositionals: Int?
    /// The options it understands.
    public var options: [OptionSpec]
    /// Runs the command; returns the exit code.
    public var run: @Sendable (ResolvedOptions, CommandContext) async throws -> Int32

    public init(
        name: String,
        summary: String,
        usage: String = "[options]",
        details: String = "",
        maximumPositionals: Int? = nil,
        options: [OptionSpec],
        run: @escaping @Sendable (ResolvedOptions, CommandContext) async throws -> Int32
    ) {
        self.name = name
        self.summary = summary
        self.usage = usage
        self.details = details
        self.maximumPositionals = maximumPositionals
        self.options = options
        self.run = run
    }

    /// The help text.
    public var help: String {
        var lines = ["usage: longlink \(name) \(usage)", "", summary]
        if !details.isEmpty { lines += ["", details] }
        lines += ["", "options:"]
        for spec in options + OptionResolver.commonSpecs {
            var left = "  --\(spec.name)"
            if spec.kind != .flag { left += " \(spec.valueName)" }
            var right = spec.help
            if let value = spec.defaultValue { right += " (default: \(value))" }
            if spec.kind == .list { right += " (repeatable)" }
            if spec.configurable { right += " [\(spec.environmentName)]" }
            let padding = max(1, 34 - left.count)
            lines.append(left + String(repeating: " ", count: padding) + right)
        }
        return lines.joined(separator: "\n")
    }
}

/// What a running command can reach: its output streams and the environment.
public struct CommandContext: Sendable {
    /// Output streams.
    public var io: CommandIO
    /// The environment variables the process started with.
    public var environment: [String: String]

    public init(io: CommandIO, environment: [String: String]) {
        self.io = io
        self.environment = environment
    }
}
