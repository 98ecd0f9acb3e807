/// Where a Redis Cluster can be found: `redis-cluster://HOST:PORT[,HOST:PORT…]`, seed nodes (any of them,
/// masters or replicas) from which the client discovers the rest with `CLUSTER SLOTS`. Port 6379 by default. A
/// cluster has only database 0, so no `/DB` part is accepted.
public struct RedisClusterAddress: Hashable, Sendable, CustomStringConvertible {
    /// The URL scheme.
    public static let scheme = "redis-cluster://"

    /// The seed nodes, in the order given.
    public var seeds: [RedisAddress]

    /// Creates an address from seeds (at least one).
    public init(seeds: [RedisAddress]) {
        precondition(!seeds.isEmpty, "a cluster address needs at least one seed")
        self.seeds = seeds
    }

    /// Parses `redis-cluster://HOST:PORT[,HOST:PORT…]`; nil when the text is not of that form.
    public init?(url: String) {
        guard url.hasPrefix(Self.scheme) else { return nil }
        let list = url.dropFirst(Self.scheme.count)
        guard !list.isEmpty, !list.contains("/") else { return nil }
        var seeds: [RedisAddress] = []
        for part in list.split(separator: ",", omittingEmptySubsequences: false) {
            guard let seed = RedisAddress(url: "redis://" + part) else { return nil }
            seeds.append(seed)
        }
        self.init(seeds: seeds)
    }

    public var description: String {
        Self.scheme + seeds.map { "\($0)".dropFirst("redis://".count) }.joined(separator: ",")
    }
}
