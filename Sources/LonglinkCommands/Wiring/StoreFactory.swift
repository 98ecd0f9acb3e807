import Foundation
import LonglinkCore
import LonglinkRedis
import LonglinkSQLite
import LonglinkStores

/// Turns the `store` toggle into a concrete `OrderStore`: the one place that knows every implementation.
enum StoreFactory {
    /// Parses a toggle value, with the accepted forms in the error.
    static func specification(_ text: String, option: String = "store") throws(CommandLineError) -> StoreSpecification {
        do {
            return try StoreSpecification(parsing: text)
        } catch {
            throw CommandLineError("--\(option): \(error)")
        }
    }

    /// Opens the store a specification names. A SQLite file's directory is created when missing. A Redis store
    /// uses `redis` (password, prefix, channels) and `PUBLISH`es each record when `publishes` is true (a Redis
    /// broker runs on the same server).
    static func open(
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

    /// Loads the state machines: the JSON file when given, the built-in lines otherwise.
    static func catalog(file: String?) throws(CommandFailure) -> StateMachineCatalog {
        guard let file else { return .builtIn }
        do {
            return try StateMachineCatalog.load(jsonFile: file)
        } catch {
            throw CommandFailure("\(error)", exitCode: 2)
        }
    }
}
