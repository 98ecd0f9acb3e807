/// Where a Redis server listens, parsed from `redis://HOST[:PORT][/DB]` (port 6379 and database 0 by default).
public struct RedisAddress: Hashable, Sendable, CustomStringConvertible {
    /// Host name or numeric address.
    public var host: String
    /// TCP port.
    public var port: Int
    /// Database number (`SELECT`); pub/sub ignores it.
    public var database: Int

    /// Creates an address.
    public init(host: String, port: Int = 6379, database: Int = 0) {
        self.host = host
        self.port = port
        self.database = database
    }

    /// Parses `redis://HOST[:PORT][/DB]`; nil when the text is not of that form.
    public init?(url: String) {
        guard url.hasPrefix("redis://") else { return nil }
        var rest = Substring(url.dropFirst("redis://".count))
        var database = 0
        if let slash = rest.firstIndex(of: "/") {
            let tail = rest[rest.index(after: slash)...]
            if !tail.isEmpty {
                guard let value = Int(tail), value >= 0 else { return nil }
                database = value
            }
            rest = rest[..<slash]
        }
        guard !rest.isEmpty else { return nil }
        var host = String(rest)
        var port = 6379
        if let colon = rest.lastIndex(of: ":"), !rest.hasSuffix("]") {
            guard let value = Int(rest[rest.index(after: colon)...]), (1...65_535).contains(value) else { return nil }
            port = value
            host = String(rest[..<colon])
        }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { return nil }
        self.init(host: host, port: port, database: database)
    }

    public var description: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "redis://\(shownHost):\(port)" + (database == 0 ? "" : "/\(database)")
    }
}
