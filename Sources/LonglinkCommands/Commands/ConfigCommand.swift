/// `longlink config check [FILE]` and `longlink config default`: validate a configuration and show every
/// effective value with its source, or print a commented default config file (with any values given as flags).
public enum ConfigCommand {
    /// The command.
    public static let command = Command(
        name: "config",
        summary: "check a configuration (with where each value came from) or print the default one",
        usage: "check [FILE] [serve options] | default [serve options]",
        details: """
            Precedence, lowest first: built-in default < config file < environment (LONGLINK_*) < flag.
            `default` prints every option at its default; an option given as a flag is written with that value
            instead (`config default --secret-file /etc/longlink/token-secret`).
            """,
        maximumPositionals: 2,
        options: ServeOptions.specs
    ) { options, context in
        switch options.positionals.first {
        case "default":
            context.io.out(try defaultFile(setting: flagValues(options)))
            return 0
        case "check":
            var resolved = options
            if options.positionals.count > 1 {
                var arguments = ["--config", options.positionals[1]]
                for spec in ServeOptions.specs where options.source(spec.name) == .flag {
                    for value in options.list(spec.name) { arguments += ["--\(spec.name)", value] }
                }
                resolved = try OptionResolver(specs: ServeOptions.specs)
                    .resolve(arguments: arguments, environment: context.environment)
            }
            let configuration = try ServeConfiguration(options: resolved)
            context.io.out(effectiveTable(resolved))
            context.io.out("configuration is valid")
            let security = configuration.security
            if !security.insecureDev && security.secretFile == nil && context.environment[TokenSecret.environmentName] == nil {
                context.io.err(
                    "warning: no token secret (secret-file or \(TokenSecret.environmentName)): serve will refuse to start"
                )
            }
            return 0
        default:
            throw CommandLineError("expected 'check [FILE]' or 'default'")
        }
    }

    /// The effective values, one per line, with their source.
    static func effectiveTable(_ options: ResolvedOptions) -> String {
        var lines: [String] = []
        for spec in ServeOptions.specs {
            let value = options.list(spec.name).joined(separator: ",")
            let source = options.source(spec.name).map { "\($0)" } ?? "unset"
            let left = "\(spec.name) = \(value.isEmpty ? "(unset)" : value)"
            lines.append(left + String(repeating: " ", count: max(1, 48 - left.count)) + "# \(source)")
        }
        return lines.joined(separator: "\n")
    }

    /// The serve options given as flags, in spec order, checked as a whole like `serve` would.
    static func flagValues(_ options: ResolvedOptions) throws -> [String: [String]] {
        var arguments: [String] = []
        var values: [String: [String]] = [:]
        for spec in ServeOptions.specs where options.source(spec.name) == .flag {
            guard spec.configurable else { throw CommandLineError("--\(spec.name) cannot be set in a config file") }
            values[spec.name] = options.list(spec.name)
            for value in options.list(spec.name) { arguments += ["--\(spec.name)", value] }
        }
        _ = try ServeConfiguration(options: try OptionResolver(specs: ServeOptions.specs).resolve(arguments: arguments, environment: [:]))
        return values
    }

    /// A config file with every option at its default, commented; options in `setting` carry those values.
    public static func defaultFile(setting: [String: [String]] = [:]) -> String {
        var lines = [
            "# Longlink configuration. Each line is 'name = value'; '#' starts a comment.",
            "# Precedence, lowest first: built-in default < this file < environment (LONGLINK_NAME) < command-line flag.",
            "",
        ]
        for spec in ServeOptions.specs {
            lines.append("# \(spec.help)  [\(spec.environmentName), --\(spec.name)]")
            if let values = setting[spec.name] {
                lines += values.map { "\(spec.name) = \($0)" }
            } else {
                lines.append(spec.defaultValue.map { "\(spec.name) = \($0)" } ?? "# \(spec.name) =")
            }
            lines.append("")
        }
        return lines.joined(separator: "\n")
    }
}
