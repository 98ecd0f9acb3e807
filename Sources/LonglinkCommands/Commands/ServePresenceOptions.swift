import LonglinkCore
import LonglinkRedis

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

/// The validated presence options.
public struct ServePresenceConfiguration: Sendable, Hashable {
    /// Routes with more subscribers report counts only.
    public var countsOnlyAbove: Int
    /// How long a dead node's entries outlive its last refresh (Redis).
    public var ttl: Duration

    /// Validates the resolved options.
    public init(options: ResolvedOptions) throws(CommandLineError) {
        countsOnlyAbove = try options.int("presence-counts-only-above") ?? 100
        ttl = try options.duration("presence-ttl") ?? .seconds(10)
        guard countsOnlyAbove >= 0 else { throw CommandLineError("--presence-counts-only-above must be zero or more") }
        guard ttl >= .milliseconds(300) else { throw CommandLineError("--presence-ttl must be at least 300ms") }
    }

    public init(countsOnlyAbove: Int = 100, ttl: Duration = .seconds(10)) {
        self.countsOnlyAbove = countsOnlyAbove
        self.ttl = ttl
    }

    /// `LocalPresence`, or presence in the broker's Redis when nodes share one (`RedisPresence`; on a Redis
    /// Cluster `RedisClusterPresence`, whose keys are tagged by route).
    func make(broker: BrokerChoice, redis: RedisSettings, nodeID: String, logger: Logger) throws -> any PresenceStore {
        switch broker {
        case .local:
            return LocalPresence(countsOnlyAbove: countsOnlyAbove)
        case .redis(let address):
            do {
                return try RedisPresence(
                    configuration: RedisPresence.Configuration(
                        address: address, password: redis.password, prefix: redis.prefix, nodeID: nodeID, ttl: ttl,
                        countsOnlyAbove: countsOnlyAbove, logger: logger.labeled("presence")
                    )
                )
            } catch {
                throw CommandFailure("\(error)")
            }
        case .redisCluster(let address):
            do {
                return try RedisClusterPresence(
                    configuration: RedisClusterPresence.Configuration(
                        address: address, password: redis.password, prefix: redis.prefix, nodeID: nodeID, ttl: ttl,
                        countsOnlyAbove: countsOnlyAbove, logger: logger.labeled("presence")
                    )
                )
            } catch {
                throw CommandFailure("\(error)")
            }
        }
    }
}
