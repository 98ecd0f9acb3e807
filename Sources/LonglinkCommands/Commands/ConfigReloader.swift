import LonglinkCore

/// What `serve` re-reads on SIGHUP: the config file it started with. The log level changes at once; other
/// settings are checked and reported, and take effect at the next start. The documented precedence still holds:
/// a log level given by flag or environment is not overridden by the file.
struct ConfigReloader: Sendable {
    /// The config file, if `serve` was started with one (`--config` or `LONGLINK_CONFIG`).
    let path: String?
    /// Where the log level came from at start.
    let levelSource: OptionSource?
    /// The environment at start (re-resolving checks the file against it).
    let environment: [String: String]

    init(options: ResolvedOptions, environment: [String: String]) {
        self.path = options.string("config") ?? environment["LONGLINK_CONFIG"]
        self.levelSource = options.source("log-level")
        self.environment = environment
    }

    /// Re-reads the file and applies what can change at run time; returns what happened, for the log.
    func reload(into levelSwitch: LogLevelSwitch) -> String {
        guard let path else { return "SIGHUP: no config file to re-read (start with --config FILE)" }
        let resolved: ResolvedOptions
        do {
            resolved = try OptionResolver(specs: ServeOptions.specs).resolve(arguments: ["--config", path], environment: environment)
            _ = try ServeConfiguration(options: resolved)
        } catch {
            return "SIGHUP: \(path) is not valid, keeping the current settings: \(error.message)"
        }
        if let levelSource, levelSource > .file {
            return "SIGHUP: re-read \(path); log-level stays \(levelSwitch.level) (set by \(levelSource), which the file does not override)"
        }
        guard let text = resolved.string("log-level"), let level = LogLevel(name: text) else {
            return "SIGHUP: re-read \(path); no valid log-level"
        }
        let before = levelSwitch.level
        levelSwitch.set(level)
        return "SIGHUP: re-read \(path); log level \(before) → \(level); other settings apply at the next start"
    }
}
