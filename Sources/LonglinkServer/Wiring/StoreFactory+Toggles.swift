public import LonglinkCore
import LonglinkRedis
import LonglinkSQLite
public import LonglinkStores

/// The `ToggleStore` beside each kind of order store: the same backend (memory, the same SQLite file, the same
/// Redis or Redis Cluster under the same key prefix), on a connection of its own.
extension StoreFactory {
    /// Opens the toggle store of the store a specification names. Open it after the order store (a SQLite file's
    /// directory is created by `open`).
    public static func openToggles(_ specification: StoreSpecification, redis: RedisSettings = RedisSettings()) throws(StoreError)
        -> any ToggleStore
    {
        switch specification {
        case .memory:
            return MemoryToggleStore()
        case .sqlite(let path):
            return try SQLiteToggleStore(path: path)
        case .redis(let host, let port, let database):
            return try RedisToggleStore(
                address: RedisAddress(host: host, port: port, database: database), password: redis.password, prefix: redis.prefix,
                durability: redis.durability
            )
        case .redisCluster:
            return try RedisToggleStore(
                cluster: try clusterAddress(specification), password: redis.password, prefix: redis.prefix, durability: redis.durability
            )
        }
    }

    /// Opens the toggles of an existing store to read from (`longlink migrate`'s source), creating nothing; call
    /// it after `openExisting` accepted the store.
    public static func openExistingToggles(_ specification: StoreSpecification, redis: RedisSettings = RedisSettings()) throws(StoreError)
        -> any ToggleStore
    {
        switch specification {
        case .memory:
            throw .storage("the memory store keeps nothing between processes, so there is nothing to read", retryable: false)
        case .sqlite(let path):
            return try SQLiteToggleStore(readingExisting: path)
        case .redis(let host, let port, let database):
            return try RedisToggleStore(
                address: RedisAddress(host: host, port: port, database: database), password: redis.password, prefix: redis.prefix, readOnly: true
            )
        case .redisCluster:
            return try RedisToggleStore(cluster: try clusterAddress(specification), password: redis.password, prefix: redis.prefix, readOnly: true)
        }
    }

    /// The shadow pair of toggle stores when a shadow order store runs (`--shadow-store`), the primary's otherwise.
    static func openToggles(
        primary: StoreSpecification,
        shadow: StoreSpecification?,
        reporter: ShadowDivergenceReporter,
        redis: RedisSettings = RedisSettings()
    ) throws(StoreError) -> any ToggleStore {
        let store = try openToggles(primary, redis: redis)
        guard let shadow else { return store }
        return ShadowToggleStore(primary: store, shadow: try openToggles(shadow, redis: redis), reporter: reporter)
    }

    private static func clusterAddress(_ specification: StoreSpecification) throws(StoreError) -> RedisClusterAddress {
        guard let cluster = RedisClusterAddress(url: specification.description) else {
            throw .storage("invalid Redis Cluster address \(specification)", retryable: false)
        }
        return cluster
    }
}
