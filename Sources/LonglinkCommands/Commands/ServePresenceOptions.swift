import LonglinkCore
public import LonglinkServer

/// The serve options of presence (who is subscribed where).
public enum ServePresenceOptions {
    /// The options.
    public static let specs: [OptionSpec] = [
        OptionSpec(
            "presence-counts-only-above",
            default: "100",
            valueName: "N",
            help: "routes with more subscribers report presence as counts only and send no join/leave events"
        ),
        OptionSpec(
            "presence-ttl",
            default: "10s",
            valueName: "DURATION",
            help: "with --broker redis: a node that stops (kill -9) leaves presence at most this long after"
        ),
    ]
}

extension PresenceSettings {
    /// Validates the resolved options.
    public init(options: ResolvedOptions) throws(CommandLineError) {
        let countsOnlyAbove = try options.int("presence-counts-only-above") ?? 100
        let ttl = try options.duration("presence-ttl") ?? .seconds(10)
        guard countsOnlyAbove >= 0 else { throw CommandLineError("--presence-counts-only-above must be zero or more") }
        guard ttl >= .milliseconds(300) else { throw CommandLineError("--presence-ttl must be at least 300ms") }
        self.init(countsOnlyAbove: countsOnlyAbove, ttl: ttl)
    }
}
