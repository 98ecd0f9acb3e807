/// Which store to use, parsed from the `store` toggle (`--store`, `LONGLINK_STORE`, config file):
/// `memory`, `sqlite:<path>` or `redis://host[:port][/db]`. Unknown values are an error, never a fallback.
/// LonglinkCommands turns a specification into a concrete store.
public enum StoreSpecification: Hashable, Sendable, CustomStringConvertible {
    /// `MemoryOrderStore`: nothing survives a restart.
    case memory
    /// `SQLiteOrderStore` in the file at `path` (created when missing).
    case sqlite(path: String)
    /// A Redis store at `host:port`, database `database`.
    case redis(host: String, port: Int, database: Int)
    /// A Redis Cluster store found from seed nodes, each `host:port` (`redis-cluster://HOST:PORT[,HOST:PORT…]`).
    case redisCluster(seeds: [String])

    /// The accepted forms, for help texts and errors.
    public static let forms = "memory, sqlite:<path>, redis://host[:port][/db], redis-cluster://host:port[,host:port…]"

    /// Parses a toggle value.
    public init(parsing text: String) throws(StoreSpecificationError) {
        if text == "memory" {
            self = .memory
            return
        }
        if text.hasPrefix("sqlite:") {
            let path = String(text.dropFirst("sqlite:".count))
            guard !path.isEmpty else {
                throw .invalid(text, reason: "sqlite needs a file path, e.g. sqlite:/var/lib/longlink/orders.db")
            }
            self = .sqlite(path: path)
            return
        }
        if text.hasPrefix("redis-cluster://") {
            let list = text.dropFirst("redis-cluster://".count)
            var seeds: [String] = []
            for seed in list.split(separator: ",", omittingEmptySubsequences: false) {
                guard let colon = seed.lastIndex(of: ":"), colon > seed.startIndex, !seed.contains("/"),
                    let port = Int(seed[seed.index(after: colon)...]), (1...65_535).contains(port)
                else {
                    throw .invalid(text, reason: "expected redis-cluster://host:port[,host:port…] (seed nodes of the cluster)")
                }
                seeds.append("\(seed[..<colon]):\(port)")
            }
            self = .redisCluster(seeds: seeds)
            return
        }
        if text.hasPrefix("redis://") {
            let rest = text.dropFirst("redis://".count)
            let parts = rest.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
            let address = parts[0]
            var database = 0
            if parts.count == 2 && !parts[1].isEmpty {
                guard let db = Int(parts[1]), db >= 0 else {
                    throw .invalid(text, reason: "the database must be a number ≥ 0")
                }
                database = db
            }
            let hostPort = address.split(separator: ":", omittingEmptySubsequences: false)
            guard (1...2).contains(hostPort.count), !hostPort[0].isEmpty else {
                throw .invalid(text, reason: "expected redis://host[:port][/db]")
            }
            var port = 6379
            if hostPort.count == 2 {
                guard let p = Int(hostPort[1]), (1...65_535).contains(p) else {
                    throw .invalid(text, reason: "the port must be 1-65535")
                }
                port = p
            }
            self = .redis(host: String(hostPort[0]), port: port, database: database)
            return
        }
        throw .unknown(text)
    }

    public var description: String {
        switch self {
        case .memory: "memory"
        case .sqlite(let path): "sqlite:\(path)"
        case .redis(let host, let port, let database): "redis://\(host):\(port)/\(database)"
        case .redisCluster(let seeds): "redis-cluster://" + seeds.joined(separator: ",")
        }
    }
}

/// Why a store toggle value was refused.
public enum StoreSpecificationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Not one of the known forms.
    case unknown(String)
    /// A known form with a bad part.
    case invalid(String, reason: String)

    public var description: String {
        switch self {
        case .unknown(let text):
            "StoreSpecificationError: unknown store '\(text)'; use one of: \(StoreSpecification.forms)"
        case .invalid(let text, let reason): "StoreSpecificationError: invalid store '\(text)': \(reason)"
        }
    }
}
