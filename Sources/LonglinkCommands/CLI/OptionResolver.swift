import Foundation

/// Merges the four sources of an option into `ResolvedOptions`, in one documented precedence:
///
///     built-in default  <  config file (--config FILE or LONGLINK_CONFIG)  <  environment (LONGLINK_*)  <  flag
///
/// A later source overrides an earlier one; list options take all values of the highest source that sets them.
/// Unknown flags and unknown config-file names are errors (a typo must not silently fall back to a default).
public struct OptionResolver: Sendable {
    /// The command's options (the resolver adds `--config` and `--help`).
    public let specs: [OptionSpec]

    /// Options every command accepts.
    public static let commonSpecs: [OptionSpec] = [
        OptionSpec(
            "config",
            valueName: "FILE",
            help: "config file of 'name = value' lines (also LONGLINK_CONFIG)",
            configurable: false
        ),
        OptionSpec("help", kind: .flag, help: "show this help", configurable: false),
    ]

    public init(specs: [OptionSpec]) {
        self.specs = specs + Self.commonSpecs
    }

    /// Resolves `arguments` (after the subcommand name) against `environment`.
    public func resolve(arguments: [String], environment: [String: String]) throws(CommandLineError) -> ResolvedOptions {
        var values: [String: ResolvedOptions.Value] = [:]
        for spec in specs {
            if let value = spec.defaultValue { values[spec.name] = .init(values: [value], source: .default) }
        }
        let (flags, positionals) = try parseFlags(arguments)

        let configPath = flags.last(where: { $0.name == "config" })?.value ?? environment["LONGLINK_CONFIG"]
        if let configPath, !flags.contains(where: { $0.name == "help" }) {
            let file = try Self.loadConfigFile(configPath)
            var fromFile: [String: [String]] = [:]
            for entry in file.entries {
                guard let spec = specs.first(where: { $0.name == entry.name }) else {
                    throw CommandLineError("\(file.path):\(entry.line): unknown option '\(entry.name)'")
                }
                guard spec.configurable else {
                    throw CommandLineError("\(file.path):\(entry.line): '\(entry.name)' cannot be set in a config file")
                }
                fromFile[spec.name, default: []].append(entry.value)
            }
            for (name, list) in fromFile {
                let spec = specs.first { $0.name == name }!
                values[name] = .init(values: spec.kind == .list ? list : [list.last!], source: .file)
            }
        }

        for spec in specs where spec.configurable {
            guard let text = environment[spec.environmentName] else { continue }
            let list = spec.kind == .list ? text.split(separator: ",").map { $0.trimmingSpaces } : [text]
            values[spec.name] = .init(values: list, source: .environment)
        }

        var fromFlags: [String: [String]] = [:]
        for flag in flags { fromFlags[flag.name, default: []].append(flag.value) }
        for (name, list) in fromFlags {
            let spec = specs.first { $0.name == name }!
            values[name] = .init(values: spec.kind == .list ? list : [list.last!], source: .flag)
        }
        return ResolvedOptions(specs: specs, values: values, positionals: positionals)
    }

    private func parseFlags(_ arguments: [String]) throws(CommandLineError) -> ([(name: String, value: String)], [String]) {
        var flags: [(name: String, value: String)] = []
        var positionals: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--" {
                positionals.append(contentsOf: arguments[index...])
                break
            }
            guard argument.hasPrefix("-"), argument.count > 1, !argument.isNegativeNumber else {
                positionals.append(argument)
                continue
            }
            if argument == "-h" {
                flags.append(("help", ""))
                continue
            }
            guard argument.hasPrefix("--") else {
                throw CommandLineError("unknown option '\(argument)'; options are long, e.g. --help")
            }
            var name = String(argument.dropFirst(2))
            var inlineValue: String?
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            guard let spec = specs.first(where: { $0.name == name }) else {
                throw CommandLineError("unknown option '--\(name)'; see --help")
            }
            switch spec.kind {
            case .flag:
                flags.append((name, inlineValue ?? "true"))
            case .value, .list:
                if let inlineValue {
                    flags.append((name, inlineValue))
                } else {
                    guard index < arguments.count else { throw CommandLineError("--\(name) needs a \(spec.valueName)") }
                    flags.append((name, arguments[index]))
                    index += 1
                }
            }
        }
        return (flags, positionals)
    }

    /// Reads and parses a config file.
    public static func loadConfigFile(_ path: String) throws(CommandLineError) -> ConfigFile {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CommandLineError("cannot read config file '\(path)': no such file or not readable")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw CommandLineError("config file '\(path)' is not UTF-8 text")
        }
        return try ConfigFile(text: text, path: path)
    }
}

extension String {
    fileprivate var isNegativeNumber: Bool { count > 1 && hasPrefix("-") && Double(dropFirst()) != nil }
}
