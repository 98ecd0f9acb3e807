/// One option a command understands. The same option can be set, from lowest to highest precedence, by its
/// default, the config file (`name = value`), the environment (`LONGLINK_NAME`, upper-cased, `-` → `_`) and the
/// command line (`--name value` or `--name=value`).
public struct OptionSpec: Sendable, Hashable {
    /// What kind of value the option takes.
    public enum Kind: Sendable, Hashable {
        /// Takes a value (`--store sqlite:data.db`).
        case value
        /// A switch (`--json`); true when present, or when set to true/yes/1/on in the file or environment.
        case flag
        /// May be given several times; values accumulate (`--route a --route b`).
        case list
    }

    /// The option's name without dashes, e.g. `store`.
    public var name: String
    /// What it takes.
    public var kind: Kind
    /// The default, as text (nil = no default).
    public var defaultValue: String?
    /// A placeholder for help (`HOST:PORT`).
    public var valueName: String
    /// One line of help.
    public var help: String
    /// Whether the option may come from the config file and the environment (false for secrets shown in `ps`
    /// and one-off values such as `--config` itself).
    public var configurable: Bool

    public init(
        _ name: String,
        kind: Kind = .value,
        default defaultValue: String? = nil,
        valueName: String = "VALUE",
        help: String,
        configurable: Bool = true
    ) {
        self.name = name
        self.kind = kind
        self.defaultValue = defaultValue
        self.valueName = valueName
        self.help = help
        self.configurable = configurable
    }

    /// The environment variable that sets this option.
    public var environmentName: String {
        "LONGLINK_" + String(name.uppercased().map { $0 == "-" ? "_" : $0 })
    }
}

/// Where an effective option value came from, lowest precedence first.
public enum OptionSource: Int, Sendable, Comparable, CustomStringConvertible {
    case `default`, file, environment, flag

    public static func < (lhs: OptionSource, rhs: OptionSource) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String {
        switch self {
        case .default: "default"
        case .file: "file"
        case .environment: "env"
        case .flag: "flag"
        }
    }
}
