import Foundation
public import LonglinkCore
import LonglinkRedis
import LonglinkSQLite
public import LonglinkStores

/// Turns the `store` toggle into a concrete `OrderStore`: the one place that knows every implementation.
public enum StoreFactory {
    /// Opens the store a specification names. A SQLite file's directory is created when missing. A Redis store
    /// uses `redis` (password, prefix, channels) and `PUBLISH`es each record when `publishes` is true (a Redis
    /// broker runs on the same server).
    public static func open(
        _ specification: StoreSpecification,
        catalog: StateMachineCatalog = .builtIn,
        retention: StoreRetention = .standard,
        clock: any WallClock = SystemWallClock(),
        redis: RedisSettings = RedisSettings(),
        publishes: Bool = false
    ) throws(StoreError) -> any OrderStore {
        switch specification {
        case .memory:
            return MemoryOrderStore(catalog: catalog, retention: retention, clock: clock)
        case .sqlite(let path):
            let directory = (path as NSString).deletingLastPathComponent
            if !directory.isEmpty && !FileManager.default.fileExists(atPath: directory) {
                try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            }
            return try SQLiteOrderStore(path: path, catalog: catalog, retention: retention, clock: clock)
        case .redis(let host, let port, let database):
            return try RedisOrderStore(
                address: RedisAddress(host: host, port: port, database: database),
                password: redis.password,
                prefix: redis.prefix,
                channels: publishes ? redis.channels : nil,
                durability: redis.durability,
                catalog: catalog,
                retention: retention,
                clock: clock
            )
        case .redisCluster:
            guard let cluster = RedisClusterAddress(url: specification.description) else {
                throw .storage("invalid Redis Cluster address \(specification)", retryable: false)
            }
            return try RedisOrderStore(
                cluster: cluster,
                password: redis.password,
                prefix: redis.prefix,
                publishes: publishes,
                durability: redis.durability,
                catalog: catalog,
                retention: retention,
                clock: clock
            )
        }
    }

    /// Opens an existing store to read from (`longlink migrate`'s source), creating nothing: a SQLite file
    /// read-only (a missing file, or one without Longlink's tables, is refused naming the path), a Redis store
    /// without creating its epoch (a database holding no Longlink store is refused naming the address; on a cluster,
    /// every slot's epoch is read and a cluster holding none is refused). `memory`
    /// is never an existing store: callers refuse it first.
    public static func openExisting(
        _ specification: StoreSpecification,
        catalog: StateMachineCatalog = .builtIn,
        redis: RedisSettings = RedisSettings()
    ) throws(StoreError) -> any OrderStore {
        switch specification {
        case .memory:
            throw .storage("the memory store keeps nothing between processes, so there is nothing to read", retryable: false)
        case .sqlite(let path):
            return try SQLiteOrderStore(readingExisting: path, catalog: catalog)
        case .redis(let host, let port, let database):
            return try RedisOrderStore(
                address: RedisAddress(host: host, port: port, database: database),
                password: redis.password,
                prefix: redis.prefix,
                channels: nil,
                catalog: catalog,
                readOnly: true
            )
        case .redisCluster:
            guard let cluster = RedisClusterAddress(url: specification.description) else {
                throw .storage("invalid Redis Cluster address \(specification)", retryable: false)
            }
            return try RedisOrderStore(cluster: cluster, password: redis.password, prefix: redis.prefix, publishes: false, catalog: catalog, readOnly: true)
        }
    }

    /// Loads the state machines: the JSON file when given, the built-in lines otherwise.
    public static func catalog(file: String?) throws(ServerFailure) -> StateMachineCatalog {
        guard let file else { return .builtIn }
        do {
            return try StateMachineCatalog.load(jsonFile: file)
        } catch {
            throw ServerFailure("\(error)", exitCode: 2)
        }
    }
}
