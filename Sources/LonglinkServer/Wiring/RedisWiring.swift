import Foundation
import LonglinkCore
public import LonglinkRedis
import LonglinkStores

/// The `broker` toggle: `local` (one node), `redis://HOST:PORT` (several nodes sharing one Redis) or
/// `redis-cluster://HOST:PORT[,HOST:PORT…]` (several nodes on a Redis Cluster, sharded pub/sub).
public enum BrokerChoice: Hashable, Sendable, CustomStringConvertible {
    /// `LocalBroker`: records reach this process's subscribers only.
    case local
    /// `RedisBroker` on this server.
    case redis(RedisAddress)
    /// `RedisClusterBroker` on this cluster.
    case redisCluster(RedisClusterAddress)

    public var description: String {
        switch self {
        case .local: "local"
        case .redis(let address): "\(address)"
        case .redisCluster(let cluster): "\(cluster)"
        }
    }
}

/// What the Redis store and broker share: the password (`AUTH`), the key/channel prefix and the channel scheme.
/// TLS to Redis is not supported (hiredis 0.14 from Debian is built without it): run Redis on a private network
/// or behind a TLS tunnel (stunnel, spiped).
public struct RedisSettings: Hashable, Sendable {
    /// Sent with `AUTH` on every connection when set.
    public var password: String?
    /// Key and channel prefix.
    public var prefix: String
    /// How routes map to channels.
    public var channels: RedisChannelScheme
    /// When the store acknowledges a change (`--redis-wait-replicas`, `--redis-wait-timeout`).
    public var durability: RedisDurability

    public init(
        password: String? = nil,
        prefix: String = "longlink",
        channels: RedisChannelScheme = .perRoute,
        durability: RedisDurability = .master
    ) {
        self.password = password
        self.prefix = prefix
        self.channels = channels
        self.durability = durability
    }

    /// The password from `--redis-password-file` (first line, trailing whitespace dropped) or else the
    /// `LONGLINK_REDIS_PASSWORD` environment variable; never from a flag, so it does not show in `ps`.
    public static func password(file: String?, environment: [String: String]) throws(ServerFailure) -> String? {
        if let file, !file.isEmpty {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                throw ServerFailure("--redis-password-file: cannot read \(file)", exitCode: 2)
            }
            let password = String(text.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
                .trimmingCharacters(in: .whitespaces)
            guard !password.isEmpty else { throw ServerFailure("--redis-password-file: \(file) is empty", exitCode: 2) }
            return password
        }
        return environment["LONGLINK_REDIS_PASSWORD"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// `--redis-wait-replicas N --redis-wait-timeout T`: acknowledge after `WAIT N T` (N = 0: on the master).
    public static func durability(replicas: Int, timeout: Duration) -> RedisDurability {
        RedisDurability(replicas: replicas, timeout: timeout)
    }

    /// `--redis-channel-shards N`: 0 is one channel per route, N > 0 is N sharded channels.
    public static func channels(shards: Int) -> RedisChannelScheme { shards > 0 ? .sharded(shards) : .perRoute }
}

/// Waits for Redis before a node listens: a node without its store or broker must not take clients (load
/// balancers see it as down until then). Retries with exponential back-off (100 ms doubling to 5 s), logging
/// each failure; SIGTERM during the wait ends the process.
enum RedisWait {
    static func untilReachable(_ address: RedisAddress, password: String?, logger: Logger, attempts: Int = .max) throws(ServerFailure) {
        var delay: UInt32 = 100_000
        for attempt in 1...max(1, attempts) {
            do {
                let connection = try RedisBlockingConnection(address, password: password, timeout: .seconds(2))
                try connection.command(["PING"])
                if attempt > 1 { logger.notice("Redis at \(address) is reachable") }
                return
            } catch {
                if case .server(let message) = error, message.contains("NOAUTH") || message.contains("WRONGPASS") {
                    throw ServerFailure("Redis at \(address) refused the password: \(message)", exitCode: 2)
                }
                logger.warning("Redis at \(address) is unreachable (attempt \(attempt)): \(error); retrying in \(delay / 1000) ms; not listening yet")
                if attempt == attempts { break }
                usleep(delay)
                delay = min(delay * 2, 5_000_000)
            }
        }
        throw ServerFailure("Redis at \(address) is unreachable", exitCode: 1)
    }
}

extension StoreSpecification {
    /// The Redis address of a `redis://` store, nil for other stores.
    var redisAddress: RedisAddress? {
        guard case .redis(let host, let port, let database) = self else { return nil }
        return RedisAddress(host: host, port: port, database: database)
    }

    /// The cluster of a `redis-cluster://` store, nil for other stores.
    var redisClusterAddress: RedisClusterAddress? {
        guard case .redisCluster = self else { return nil }
        return RedisClusterAddress(url: description)
    }
}

/// Waits for a Redis Cluster before a node listens, like `RedisWait` for one server: until a seed answers with a
/// slot map covering every slot.
enum RedisClusterWait {
    static func untilReachable(_ address: RedisClusterAddress, password: String?, logger: Logger, attempts: Int = .max) throws(ServerFailure) {
        var delay: UInt32 = 100_000
        for attempt in 1...max(1, attempts) {
            do throws(RedisError) {
                let client = try RedisClusterClient(address, password: password, timeout: .seconds(2))
                guard client.slotMap.coversEverySlot else { throw RedisError.cluster("not every slot is served yet") }
                if attempt > 1 { logger.notice("the Redis Cluster at \(address) is reachable") }
                return
            } catch {
                if case .server(let message) = error, message.contains("NOAUTH") || message.contains("WRONGPASS") {
                    throw ServerFailure("the Redis Cluster at \(address) refused the password: \(message)", exitCode: 2)
                }
                logger.warning("the Redis Cluster at \(address) is unreachable (attempt \(attempt)): \(error); retrying in \(delay / 1000) ms; not listening yet")
                if attempt == attempts { break }
                usleep(delay)
                delay = min(delay * 2, 5_000_000)
            }
        }
        throw ServerFailure("the Redis Cluster at \(address) is unreachable", exitCode: 1)
    }
}

/// Turns the `broker` toggle into a concrete `Broker` (the one place that knows both), and decides who
/// publishes records to it.
enum BrokerFactory {
    /// Waits for Redis when the store or broker lives there, then makes the broker (not started).
    static func make(
        _ choice: BrokerChoice,
        store: StoreSpecification,
        redis: RedisSettings,
        logger: Logger
    ) throws -> any Broker {
        if let address = store.redisAddress { try RedisWait.untilReachable(address, password: redis.password, logger: logger) }
        if let cluster = store.redisClusterAddress {
            try RedisClusterWait.untilReachable(cluster, password: redis.password, logger: logger)
        }
        if case .redisCluster(let cluster) = choice {
            if cluster != store.redisClusterAddress { try RedisClusterWait.untilReachable(cluster, password: redis.password, logger: logger) }
            return try RedisClusterBroker(
                configuration: RedisClusterBroker.Configuration(
                    address: cluster,
                    password: redis.password,
                    prefix: redis.prefix,
                    logger: Logger(label: "broker", level: logger.level, sink: logger.sink)
                )
            )
        }
        guard case .redis(let address) = choice else { return LocalBroker() }
        if address != store.redisAddress { try RedisWait.untilReachable(address, password: redis.password, logger: logger) }
        return try RedisBroker(
            configuration: RedisBroker.Configuration(
                address: address,
                password: redis.password,
                prefix: redis.prefix,
                channels: redis.channels,
                logger: Logger(label: "broker", level: logger.level, sink: logger.sink)
            )
        )
    }

    /// Whether the store publishes every record itself: a Redis store on the Redis broker's server (its apply
    /// script `PUBLISH`es), in which case no `BrokerPublisher` may run, or each record would arrive twice.
    static func storePublishes(_ store: StoreSpecification, to choice: BrokerChoice) -> Bool {
        // A cluster store `SPUBLISH`es to the cluster it is on: the broker's when they share a seed.
        if case .redisCluster(let broker) = choice, let cluster = store.redisClusterAddress {
            return !Set(broker.seeds).isDisjoint(with: cluster.seeds)
        }
        guard case .redis(let broker) = choice, let address = store.redisAddress else { return false }
        return address.host == broker.host && address.port == broker.port
    }

    /// On a Redis Cluster whose store `SPUBLISH`es each record on its route's channel: the hook that also
    /// `SPUBLISH`es committed records on their lines' channels (`PREFIX:l:{LINE}`, for line-wide subscribers; the
    /// apply script cannot, a line's channel being in another slot). Nil for every other broker.
    static func lineChannelFeed(_ broker: any Broker) -> (@Sendable ([OrderChangeRecord]) -> Void)? {
        guard let cluster = broker as? RedisClusterBroker else { return nil }
        return { records in cluster.publishToLines(records) }
    }

    /// Waits (at most `timeout`) until a Redis broker has its connections up; nothing to wait for otherwise.
    static func waitUntilConnected(_ broker: any Broker, timeout: Duration = .seconds(30)) throws {
        if let cluster = broker as? RedisClusterBroker {
            let deadline = ContinuousClock.now + timeout
            while !cluster.isConnected {
                guard ContinuousClock.now < deadline else {
                    throw ServerFailure("the Redis Cluster broker could not connect to every master of \(cluster.configuration.address) within \(timeout)")
                }
                usleep(20_000)
            }
            return
        }
        guard let redis = broker as? RedisBroker else { return }
        let deadline = ContinuousClock.now + timeout
        while !redis.isConnected {
            guard ContinuousClock.now < deadline else {
                throw ServerFailure("the Redis broker could not connect to \(redis.configuration.address) within \(timeout)")
            }
            usleep(20_000)
        }
    }
}
