/// Which master serves each hash slot, from `CLUSTER SLOTS`, and updated by `MOVED` redirections between
/// refreshes. A value: the blocking client and the broker's loop each keep their own.
public struct RedisClusterSlotMap: Hashable, Sendable {
    /// A master and its replicas as `CLUSTER SLOTS` lists them.
    public struct Shard: Hashable, Sendable {
        /// The master.
        public var master: RedisAddress
        /// Its replicas.
        public var replicas: [RedisAddress]
    }

    /// For each slot, an index into `masters`, or -1 when no master serves it.
    private var owners: [Int16]
    /// The distinct masters, in the order first seen.
    public private(set) var masters: [RedisAddress]
    /// Every master with its replicas (one entry per slot range in the reply, merged by master).
    public private(set) var shards: [Shard]

    /// An empty map: no slot is served.
    public init() {
        owners = [Int16](repeating: -1, count: RedisClusterSlot.count)
        masters = []
        shards = []
    }

    /// Parses a `CLUSTER SLOTS` reply: `[[start, end, [host, port, id, …], [replica host, port, id, …]…]…]`. An
    /// empty host (the node does not know its own address) means the host that was asked, `queried`.
    public init(slots reply: RedisReply, queried: RedisAddress) throws(RedisError) {
        self.init()
        guard let ranges = reply.array else { throw .unexpectedReply("CLUSTER SLOTS answered \(reply)") }
        for range in ranges {
            guard let parts = range.array, parts.count >= 3,
                let start = parts[0].integer, let end = parts[1].integer,
                (0..<Int64(RedisClusterSlot.count)).contains(start), (start..<Int64(RedisClusterSlot.count)).contains(end),
                let master = Self.node(parts[2], queried: queried)
            else { throw .unexpectedReply("CLUSTER SLOTS has a malformed range \(range)") }
            let index = add(master, replicas: parts.dropFirst(3).compactMap { Self.node($0, queried: queried) })
            for slot in Int(start)...Int(end) { owners[slot] = Int16(index) }
        }
    }

    /// The master serving `slot`, nil when none does (the cluster is down for it).
    public func master(forSlot slot: Int) -> RedisAddress? {
        let index = owners[slot]
        return index < 0 ? nil : masters[Int(index)]
    }

    /// Whether every slot has a master.
    public var coversEverySlot: Bool { !owners.contains(-1) }

    /// The slots `master` serves.
    public func slots(of master: RedisAddress) -> [Int] {
        guard let index = masters.firstIndex(of: master) else { return [] }
        return owners.indices.filter { owners[$0] == Int16(index) }
    }

    /// Records a `MOVED` redirection: `slot` is now served by `master`.
    public mutating func assign(_ slot: Int, to master: RedisAddress) {
        owners[slot] = Int16(add(master, replicas: []))
    }

    private mutating func add(_ master: RedisAddress, replicas: [RedisAddress]) -> Int {
        if let index = masters.firstIndex(of: master) {
            if let shard = shards.firstIndex(where: { $0.master == master }) {
                for replica in replicas where !shards[shard].replicas.contains(replica) { shards[shard].replicas.append(replica) }
            }
            return index
        }
        masters.append(master)
        shards.append(Shard(master: master, replicas: replicas))
        return masters.count - 1
    }

    private static func node(_ reply: RedisReply, queried: RedisAddress) -> RedisAddress? {
        guard let parts = reply.array, parts.count >= 2, let host = parts[0].string, let port = parts[1].integer,
            (1...65_535).contains(port)
        else { return nil }
        return RedisAddress(host: host.isEmpty || host == "?" ? queried.host : host, port: Int(port))
    }
}
