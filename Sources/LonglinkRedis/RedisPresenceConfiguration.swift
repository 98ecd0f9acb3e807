public import LonglinkCore

/// Where presence is kept and how its entries expire: the same settings for one Redis (`RedisPresence`, with a
/// `RedisAddress`) and for a Redis Cluster (`RedisClusterPresence`, with a `RedisClusterAddress`).
public struct RedisPresenceConfiguration<Address: Sendable>: Sendable {
    /// The server, or the cluster's seed nodes.
    public var address: Address
    /// Sent with `AUTH` when set.
    public var password: String?
    /// Key prefix (the store's).
    public var prefix: String
    /// This node's id (the hash field).
    public var nodeID: String
    /// How long a node's entries outlive its last refresh.
    public var ttl: Duration
    /// How often changed routes are written.
    public var flushInterval: Duration
    /// Routes with more subscribers report counts only.
    public var countsOnlyAbove: Int
    /// Where problems are reported.
    public var logger: Logger

    public init(
        address: Address,
        password: String? = nil,
        prefix: String = "longlink",
        nodeID: String,
        ttl: Duration = .seconds(10),
        flushInterval: Duration = .milliseconds(20),
        countsOnlyAbove: Int = 100,
        logger: Logger = .disabled
    ) {
        self.address = address
        self.password = password
        self.prefix = prefix
        self.nodeID = nodeID
        self.ttl = ttl
        self.flushInterval = flushInterval
        self.countsOnlyAbove = countsOnlyAbove
        self.logger = logger
    }
}
