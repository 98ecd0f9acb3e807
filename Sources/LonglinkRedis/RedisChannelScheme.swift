public import LonglinkCore

/// Which Redis pub/sub channel carries a route's records. Every node and the store's apply script must use the
/// same scheme (it is part of the deployment's configuration, like the key prefix).
///
/// - `perRoute` (the default): one channel per route, `PREFIX:r:order://taxi/8812`. A node receives exactly the
///   records its clients asked for, and Redis does the filtering. The cost is one Redis subscription per distinct
///   route held on a node (Redis keeps about 100–200 bytes per channel subscription), one SUBSCRIBE or
///   UNSUBSCRIBE per route a node starts or stops holding, and a resubscription of every route after a
///   reconnect (pipelined, 1,000 channels per command).
/// - `sharded(count)`: `count` channels, `PREFIX:s:N` with N = FNV-1a(route) mod count. A node subscribes to at
///   most `count` channels whatever its clients hold, and filters locally; the subscription count, the churn
///   and the resubscription after a reconnect are bounded. The cost is traffic: a node receives every record of
///   each shard it holds a route in, so with many nodes each holding routes in every shard, every node receives
///   every record (fan-in grows with nodes × publish rate).
///
/// For order tracking (one or two subscribers per order, spread evenly) `perRoute` is the better default:
/// sharding stops filtering anything once a node holds more routes than there are shards. `sharded` suits
/// deployments where SUBSCRIBE churn dominates (very short subscriptions) and records are few.
public enum RedisChannelScheme: Hashable, Sendable, CustomStringConvertible {
    /// One channel per route.
    case perRoute
    /// A fixed number of channels chosen by a hash of the route.
    case sharded(Int)

    /// The channel carrying `route`'s records under `prefix`.
    public func channel(for route: Route, prefix: String = "longlink") -> String {
        switch self {
        case .perRoute: return "\(prefix):r:\(route.text)"
        case .sharded(let count): return "\(prefix):s:\(Self.shard(of: route, count: count))"
        }
    }

    /// FNV-1a (64-bit) of the route's text modulo `count`: stable across processes, unlike Swift's `Hasher`.
    public static func shard(of route: Route, count: Int) -> Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in route.text.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return Int(hash % UInt64(max(1, count)))
    }

    public var description: String {
        switch self {
        case .perRoute: "per-route"
        case .sharded(let count): "sharded(\(count))"
        }
    }
}
