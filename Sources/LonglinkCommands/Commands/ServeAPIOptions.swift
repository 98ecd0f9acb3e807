public import LonglinkOperations
public import LonglinkServer

/// The serve options of the backend HTTP API (`--api-listen` and its limits), kept beside `ServeOptions`.
///
/// Off by default: the API is a listener of its own, and a gateway opens it only when told where
/// (`make run` opens `127.0.0.1:9180`). It is not on the operations listener because that one serves `/metrics`,
/// health checks and the admin page without a token and belongs on the operators' network, while backends call
/// from the services' network: two ports can be firewalled for two audiences.
public enum ServeAPIOptions {
    /// The options.
    public static let specs: [OptionSpec] = [
        OptionSpec(
            "api-listen",
            default: "off",
            valueName: "HOST:PORT",
            help: "backend HTTP API (POST /api/v1/publish, ...), e.g. 127.0.0.1:9180; 'off' disables it"
        ),
        OptionSpec("api-max-body", default: "256KiB", valueName: "BYTES", help: "largest API request body (413 past it)"),
        OptionSpec("api-max-batch", default: "100", valueName: "N", help: "most changes in one POST /api/v1/publish/batch"),
        OptionSpec("api-body-timeout", default: "5s", valueName: "DURATION", help: "time for an API request to arrive (408 past it)"),
    ]
}

/// The validated API options.
public struct ServeAPIConfiguration: Sendable, Hashable {
    /// Where the API listens; nil when off.
    public var listen: HostPort?
    /// The API's limits.
    public var limits: APIServer.Configuration

    /// Validates the resolved options.
    public init(options: ResolvedOptions) throws(CommandLineError) {
        let text = options.string("api-listen") ?? "off"
        listen = text == "off" || text.isEmpty ? nil : try HostPort(parsing: text, option: "api-listen")
        let body = try options.bytes("api-max-body") ?? 256 * 1024
        let batch = try options.int("api-max-batch") ?? 100
        let timeout = try options.duration("api-body-timeout") ?? .seconds(5)
        guard body > 0 else { throw CommandLineError("--api-max-body must be above zero, got \(body)") }
        guard batch > 0 else { throw CommandLineError("--api-max-batch must be above zero, got \(batch)") }
        guard timeout > .zero else { throw CommandLineError("--api-body-timeout must be above zero") }
        limits = APIServer.Configuration(maxBodyBytes: body, maxBatchChanges: batch, bodyTimeout: timeout)
    }
}
