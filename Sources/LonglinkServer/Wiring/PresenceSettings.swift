import LonglinkCore
import LonglinkRedis

/// Presence (who is subscribed where): kept on this node, or in the broker's Redis when nodes share one.
public struct PresenceSettings: Sendable, Hashable {
    /// Routes with more subscribers report counts only.
    public var countsOnlyAbove: Int
    /// How long a dead node's entries outlive its last refresh (Redis).
    public var ttl: Duration

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
                throw ServerFailure("\(error)")
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
                throw ServerFailure("\(error)")
            }
        }
    }
}
