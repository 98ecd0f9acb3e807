/// `longlink config check [FILE]` and `longlink config default`: validate a configuration and show every
/// effective value with its source, or print a commented default config file.
public enum ConfigCommand {
    /// The command.
    public static let command = Command(
        name: "config",
        summary: "check a configuration (with where each value came from) or print the default one",
        usage: "check [FILE] [serve options] | default",
        details: "Precedence, lowest first: built-in default < config file < environment (LONGLINK_*) < flag.",
        maximumPositionals: 2,
        options: ServeOptions.specs
    ) { options, context in
        switch options.positionals.first {
        case "default":
            context.io.out(defaultFile)
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
            _ = try ServeConfiguration(options: resolved)
            context.io.out(effectiveTable(resolved))
            context.io.out("configuration is valid")
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

    /// A config file with every option at its default, commented.
    public static var defaultFile: String {
        var lines = [
            "# Longlink configuration. Each line is 'name = value'; '#' starts a comment.",
            "# Precedence, lowest first: built-in default < this file < environment (LONGLINK_NAME) < command-line flag.",
            "",
        ]
        for spec in ServeOptions.specs {
            lines.append("# \(spec.help)  [\(spec.environmentName), --\(spec.name)]")
            lines.append(spec.defaultValue.map { "\(spec.name) = \($0)" } ?? "# \(spec.name) =")
            lines.append("")
        }
        return lines.joined(separator: "\n")
    }
}
