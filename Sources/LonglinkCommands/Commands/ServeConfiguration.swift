public import LonglinkCore
public import LonglinkServer
public import enum LonglinkGateway.FlushMode

/// The validated, typed form of the serve options: every value checked once at start, so a typo is a clear
/// error before anything listens.
public struct ServeConfiguration: Sendable {
    /// Where the plain listener binds.
    public var listen: HostPort
    /// The store toggle, as given (validated by the store factory).
    public var store: String
    /// The broker toggle.
    public var broker: BrokerChoice
    /// The file holding the Redis password, if any.
    public var redisPasswordFile: String?
    /// Sharded Redis channels (0 = one per route).
    public var redisChannelShards: Int
    /// Replicas `WAIT` must confirm before a change is acknowledged (0 = none).
    public var redisWaitReplicas: Int
    /// How long `WAIT` may block per batch.
    public var redisWaitTimeout: Duration
    /// The shadow store toggle, if any.
    public var shadowStore: String?
    /// JSON state machine definitions, if not the built-in ones.
    public var stateMachinesFile: String?
    /// Node id for `connected` frames.
    public var nodeID: String?
    /// Event loop count (0 = one per core).
    public var loops: Int
    /// Connection limit per process.
    public var maxConnections: Int
    /// Subscription limit per connection.
    public var maxSubscriptions: Int
    /// Inbound frame size limit.
    public var maxFrameSize: Int
    /// Outbound queue limit per connection.
    public var outboundLimit: Int
    /// What happens past the outbound limit.
    public var slowPolicy: SlowConsumerPolicy
    /// How loops send pending bytes: one io_uring submission per iteration, or one send per connection.
    public var flush: FlushMode
    /// Server ping interval.
    public var pingInterval: Duration
    /// The ping intervals a client may ask for (smart heartbeat); nil when the interval is fixed.
    public var pingIntervalBounds: ClosedRange<Duration>?
    /// Silence tolerated after a ping.
    public var pongTimeout: Duration
    /// Time allowed for the connect frame.
    public var handshakeTimeout: Duration
    /// Drain period on SIGTERM.
    public var drainPeriod: Duration
    /// History retention.
    public var retention: StoreRetention
    /// Minimum log level.
    public var logLevel: LogLevel
    /// TLS, tokens and admission limits.
    public var security: ServeSecurityConfiguration
    /// WebSocket listeners for browsers.
    public var webSocket: ServeWebSocketConfiguration
    /// Where the operations listener (metrics, health, admin) binds; nil when switched off.
    public var metricsListen: HostPort?
    /// Log line format: nil picks text on a terminal and JSON lines otherwise.
    public var logJSON: Bool?
    /// The backend HTTP API's listener and limits.
    public var api: ServeAPIConfiguration
    /// Presence: counts-only threshold and the Redis entries' lifetime.
    public var presence: PresenceSettings

    /// Validates resolved serve options.
    public init(options: ResolvedOptions) throws(CommandLineError) {
        listen = try HostPort(parsing: options.required("listen"), option: "listen")
        store = try options.required("store")
        shadowStore = options.string("shadow-store").flatMap { $0.isEmpty ? nil : $0 }
        broker = try BrokerChoice(parsing: options.string("broker") ?? "local")
        redisPasswordFile = options.string("redis-password-file").flatMap { $0.isEmpty ? nil : $0 }
        redisChannelShards = try Self.positive(options.int("redis-channel-shards") ?? 0, "redis-channel-shards", allowZero: true)
        redisWaitReplicas = try Self.positive(options.int("redis-wait-replicas") ?? 0, "redis-wait-replicas", allowZero: true)
        redisWaitTimeout = try options.duration("redis-wait-timeout") ?? .milliseconds(500)
        guard redisWaitTimeout > .zero else { throw CommandLineError("--redis-wait-timeout must be more than 0") }
        if redisChannelShards > 0, store.hasPrefix("redis-cluster://") || options.string("broker")?.hasPrefix("redis-cluster://") == true {
            throw CommandLineError("--redis-channel-shards does not apply to a Redis Cluster (one shard channel per route, in the order's slot)")
        }
        stateMachinesFile = options.string("state-machines").flatMap { $0.isEmpty ? nil : $0 }
        nodeID = options.string("node-id").flatMap { $0.isEmpty ? nil : $0 }
        loops = try Self.positive(options.int("loops") ?? 0, "loops", allowZero: true)
        maxConnections = try Self.positive(options.int("max-connections") ?? 19_000, "max-connections")
        maxSubscriptions = try Self.positive(options.int("max-subscriptions") ?? 128, "max-subscriptions")
        maxFrameSize = try Self.positive(options.bytes("max-frame-size") ?? 65_536, "max-frame-size")
        outboundLimit = try Self.positive(options.bytes("outbound-limit") ?? 1 << 20, "outbound-limit")
        let policyText = try options.required("slow-policy")
        guard let policy = SlowConsumerPolicy(rawValue: policyText) else {
            throw CommandLineError("--slow-policy must be 'disconnect' or 'coalesce', got '\(policyText)'")
        }
        slowPolicy = policy
        let flushText = try options.required("flush")
        guard let flushMode = FlushMode(rawValue: flushText) else {
            throw CommandLineError("--flush must be 'ring' or 'each', got '\(flushText)'")
        }
        flush = flushMode
        pingInterval = try options.duration("ping-interval") ?? .seconds(25)
        pongTimeout = try options.duration("pong-timeout") ?? .seconds(10)
        pingIntervalBounds = try Self.pingIntervalBounds(options, pingInterval: pingInterval)
        handshakeTimeout = try options.duration("handshake-timeout") ?? .seconds(10)
        drainPeriod = try options.duration("drain-period") ?? .seconds(10)
        let age = try options.duration("retention-age") ?? .seconds(86_400)
        let ttl = try options.duration("terminal-ttl") ?? .seconds(86_400)
        retention = StoreRetention(
            maxRecordsPerOrder: try Self.positive(options.int("retention-records") ?? 1000, "retention-records"),
            maxHistoryAgeMillis: milliseconds(age),
            terminalOrderTTLMillis: milliseconds(ttl)
        )
        let levelText = try options.required("log-level")
        guard let level = LogLevel(name: levelText) else {
            throw CommandLineError("--log-level must be one of trace, debug, info, notice, warning, error; got '\(levelText)'")
        }
        logLevel = level
        security = try ServeSecurityConfiguration(options: options)
        api = try ServeAPIConfiguration(options: options)
        presence = try PresenceSettings(options: options)
        webSocket = try ServeWebSocketConfiguration(options: options)
        let metrics = options.string("metrics-listen") ?? "off"
        metricsListen = metrics == "off" || metrics.isEmpty ? nil : try HostPort(parsing: metrics, option: "metrics-listen")
        switch options.string("log-format") ?? "auto" {
        case "auto": logJSON = nil
        case "json": logJSON = true
        case "text": logJSON = false
        case let other: throw CommandLineError("--log-format must be auto, json or text; got '\(other)'")
        }
        if pingInterval <= .zero || pongTimeout <= .zero || handshakeTimeout <= .zero {
            throw CommandLineError("--ping-interval, --pong-timeout and --handshake-timeout must be above zero")
        }
    }

    /// `--min-ping-interval`…`--max-ping-interval`: the defaults (10 s … 5 min) widen to include `--ping-interval`;
    /// given values must hold it; `--max-ping-interval 0` fixes the interval.
    private static func pingIntervalBounds(
        _ options: ResolvedOptions, pingInterval: Duration
    ) throws(CommandLineError) -> ClosedRange<Duration>? {
        let givenMax = try options.duration("max-ping-interval")
        if givenMax == .zero { return nil }
        let givenMin = try options.duration("min-ping-interval")
        let lower = givenMin ?? min(.seconds(10), pingInterval)
        let upper = givenMax ?? max(.seconds(300), pingInterval)
        guard lower > .zero, lower <= pingInterval, pingInterval <= upper else {
            throw CommandLineError(
                "--min-ping-interval (\(lower)) ≤ --ping-interval (\(pingInterval)) ≤ --max-ping-interval (\(upper)) must hold, and the minimum must be above zero"
            )
        }
        return lower...upper
    }

    private static func positive(_ value: Int, _ name: String, allowZero: Bool = false) throws(CommandLineError) -> Int {
        guard value > 0 || (allowZero && value == 0) else {
            throw CommandLineError("--\(name) must be \(allowZero ? "zero or more" : "above zero"), got \(value)")
        }
        return value
    }
}

/// What the gateway does with a subscriber whose outbound queue passes the limit.
public enum SlowConsumerPolicy: String, Sendable, Hashable {
    /// Send the `slow` disconnect and close.
    case disconnect
    /// Keep only the latest record per order and mark the next push as having skipped records.
    case coalesce
}
