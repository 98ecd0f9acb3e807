public import LonglinkCore

/// An `OrderStore` in Redis, shared by every gateway node of a deployment.
///
/// Layout (see `RedisKeys`): each order's snapshot in a hash, its history in a stream whose entry ids are the
/// offsets (`XADD … MAXLEN` keeps `StoreRetention.maxRecordsPerOrder`), its idempotency keys in a hash, and three
/// sorted sets for walking orders and for `expire`. The epoch is a key created with `SET NX`: a flushed or
/// replaced Redis has lost it, so the next call creates a new epoch and clients holding positions of the old one
/// get `recovered = false` honestly. (A Redis restored from an older RDB keeps its epoch but may have lost the
/// last records: run Redis with `appendonly yes` and `appendfsync always` — or `everysec`, accepting up to a
/// second — when this matters.)
///
/// Applying a change: the snapshot comes from a small cache (or one read), `ChangeValidation.prepare` validates
/// it in Swift, and one Lua script (`RedisScripts.apply`) does the rest atomically: checks the epoch, replays an
/// idempotency key, compares the order's write token with the one the validation saw (so two nodes can never
/// both move an order from the same state — the loser re-validates against the winner's snapshot), appends the
/// record, updates the snapshot and `PUBLISH`es the record to the route's channel. The record therefore reaches
/// every node's `RedisBroker` from Redis itself; a node must not publish it again. `applyBatch` sends the
/// scripts of a whole batch as one pipeline.
///
/// A lost connection is reopened on the next call; while Redis is unreachable every call throws
/// `StoreError.storage(…, retryable: true)` (wire code `unavailable`). A change whose reply was lost with the
/// connection may or may not be stored: publishers retry with the same idempotency key.
///
/// Owned by one thread (the Store's writer), like every store; not `Sendable`.
public final class RedisOrderStore: OrderStore {
    /// Where the Redis server is.
    public let address: RedisAddress
    /// The state machines changes are validated against.
    public let catalog: StateMachineCatalog
    /// How much history is kept.
    public let retention: StoreRetention
    /// The channel scheme records are published with; nil publishes nothing.
    public let channels: RedisChannelScheme?
    /// The key prefix (default `longlink`).
    public let prefix: String
    /// The epoch of the history in Redis (it changes when Redis lost the history).
    public private(set) var epoch: UInt32 = 0
    /// Whether the store was opened for reading only (`readOnly`): it never creates an epoch and refuses writes.
    public let isReadOnly: Bool
    let clock: any WallClock
    let keys: RedisKeys
    private let password: String?
    private let timeout: Duration
    private var connection: RedisBlockingConnection?
    private var scriptHashes: [String: String] = [:]
    var closed = false
    /// Recently written or read orders, so a change to a known order is one round trip. Entries can be stale
    /// (another node wrote since): the script's write-token check catches that.
    var cache: [OrderKey: CachedOrder] = [:]
    /// Entries kept in `cache` before it is cleared.
    let cacheLimit = 100_000

    /// Opens the store: connects, authenticates, loads the scripts and reads (or creates) the epoch.
    /// - Parameters:
    ///   - address: the server (`redis://HOST:PORT/DB`).
    ///   - password: sent with `AUTH` when given.
    ///   - prefix: the key prefix; deployments sharing a server use different ones.
    ///   - channels: how records are published; nil publishes nothing (no Redis broker).
    ///   - timeout: bounds connecting and every command.
    ///   - readOnly: open an existing store for reading only, as `longlink migrate` reads its source: a Redis
    ///     without the epoch key (no Longlink store under `prefix` in that database) is refused instead of
    ///     getting a new epoch, and writes fail with `.storage`.
    /// - Throws: `.storage(…, retryable: true)` when Redis cannot be reached.
    public init(
        address: RedisAddress,
        password: String? = nil,
        prefix: String = "longlink",
        channels: RedisChannelScheme? = .perRoute,
        catalog: StateMachineCatalog = .builtIn,
        retention: StoreRetention = .standard,
        clock: any WallClock = SystemWallClock(),
        timeout: Duration = .seconds(5),
        readOnly: Bool = false
    ) throws(StoreError) {
        self.isReadOnly = readOnly
        self.address = address
        self.password = password
        self.prefix = prefix
        self.channels = channels
        self.catalog = catalog
        self.retention = retention
        self.clock = clock
        self.timeout = timeout
        keys = RedisKeys(prefix: prefix)
        _ = try connected()
    }

    /// Closes the connection. Further calls throw `.closed`.
    public func shutdown() {
        closed = true
        connection = nil
        cache.removeAll()
    }

    // MARK: Reads

    public func snapshot(of line: BusinessLine, _ order: OrderID) throws(StoreError) -> OrderSnapshot? {
        try load(OrderKey(line: line, id: order)).snapshot
    }

    public func records(of line: BusinessLine, _ order: OrderID, after position: StreamPosition, limit: Int)
        throws(StoreError) -> HistoryRead
    {
        let from = position.offset &+ 1
        let replies = try transaction([
            [Array("HGET".utf8), keys.order(line, order), Array("offset".utf8)],
            [Array("XRANGE".utf8), keys.history(line, order), Array("-".utf8), Array("+".utf8), Array("COUNT".utf8), Array("1".utf8)],
            [Array("XRANGE".utf8), keys.history(line, order), Array("\(from)-0".utf8), Array("+".utf8), Array("COUNT".utf8), Array(String(max(1, limit)).utf8)],
        ])
        let last = replies[0].string.flatMap { UInt64($0) }
        let first = replies[1].array?.first.flatMap { RedisRecordCodec.record(entry: $0, line: line, order: order, epoch: epoch) }
        let window = ChangeValidation.window(
            after: position,
            epoch: epoch,
            firstOffset: last == nil ? nil : first?.position.offset ?? last,
            lastOffset: last,
            limit: limit
        )
        switch window {
        case .expired: return .expired
        case .upToDate: return .records([])
        case .from(_, let count):
            let records = (replies[2].array ?? []).compactMap {
                RedisRecordCodec.record(entry: $0, line: line, order: order, epoch: epoch)
            }
            return .records(Array(records.prefix { $0.position.offset <= last ?? 0 }.prefix(count)))
        }
    }

    public func retainedHistory(of line: BusinessLine, _ order: OrderID) throws(StoreError)
        -> (snapshot: OrderSnapshot, history: [OrderChangeRecord])?
    {
        let replies = try transaction([
            [Array("HGETALL".utf8), keys.order(line, order)],
            [Array("XRANGE".utf8), keys.history(line, order), Array("-".utf8), Array("+".utf8)],
        ])
        guard let stored = RedisRecordCodec.snapshot(RedisRecordCodec.pairs(replies[0]), line: line, order: order, epoch: epoch)
        else { return nil }
        let history = (replies[1].array ?? []).compactMap {
            RedisRecordCodec.record(entry: $0, line: line, order: order, epoch: epoch)
        }
        return (stored.snapshot, history)
    }

    public func orders(after cursor: OrderCursor?, limit: Int) throws(StoreError) -> [OrderSnapshot] {
        guard limit > 0 else { return [] }
        var start: [UInt8] = cursor.map { [UInt8(ascii: "(")] + RedisKeys.member($0.line, $0.orderID) } ?? Array("-".utf8)
        var snapshots: [OrderSnapshot] = []
        while snapshots.count < limit {
            let want = limit - snapshots.count
            let members = try command([
                Array("ZRANGEBYLEX".utf8), keys.orders, start, Array("+".utf8), Array("LIMIT".utf8), Array("0".utf8),
                Array(String(want).utf8),
            ]).array ?? []
            let orders = members.compactMap { reply -> (BusinessLine, OrderID)? in
                guard case .bulk(let member) = reply else { return nil }
                return RedisKeys.order(fromMember: member)
            }
            guard let last = orders.last else { break }
            let replies = try transaction(orders.map { [Array("HGETALL".utf8), keys.order($0.0, $0.1)] })
            for (order, reply) in zip(orders, replies) {
                if let stored = RedisRecordCodec.snapshot(RedisRecordCodec.pairs(reply), line: order.0, order: order.1, epoch: epoch) {
                    snapshots.append(stored.snapshot)
                }
            }
            guard members.count == want else { break }
            start = [UInt8(ascii: "(")] + RedisKeys.member(last.0, last.1)
        }
        return snapshots
    }

    /// Refuses a write on a store opened read-only.
    func checkWritable() throws(StoreError) {
        guard !closed else { throw .closed }
        if isReadOnly { throw .storage("Redis at \(address) was opened read-only", retryable: false) }
    }

    /// The order's snapshot and write token, read fresh (and cached).
    func load(_ key: OrderKey) throws(StoreError) -> CachedOrder {
        let replies = try transaction([[Array("HGETALL".utf8), keys.order(key.line, key.id)]])
        let stored = RedisRecordCodec.snapshot(RedisRecordCodec.pairs(replies[0]), line: key.line, order: key.id, epoch: epoch)
        let cached = CachedOrder(snapshot: stored?.snapshot, token: stored?.token ?? "")
        remember(cached, for: key)
        return cached
    }

    func remember(_ order: CachedOrder, for key: OrderKey) {
        if cache.count >= cacheLimit { cache.removeAll(keepingCapacity: true) }
        cache[key] = order
    }

    // MARK: Connection, epoch, commands

    /// Runs `commands` in `MULTI … EXEC` together with a read of the epoch, adopting a changed epoch first (see
    /// `adoptEpoch`). Returns the replies of `commands`.
    func transaction(_ commands: [[[UInt8]]]) throws(StoreError) -> [RedisReply] {
        let replies = try pipeline(
            [[Array("MULTI".utf8)], [Array("GET".utf8), keys.epoch]] + commands + [[Array("EXEC".utf8)]]
        )
        guard let results = replies.last?.array, results.count == commands.count + 1 else {
            throw .storage("Redis at \(address): unexpected transaction reply \(replies.last ?? .null)", retryable: true)
        }
        if results[0].string != String(epoch) { try adoptEpoch(results[0].string) }
        return Array(results.dropFirst())
    }

    /// Takes the epoch stored in Redis; when none is stored (a new or flushed Redis), creates one with `SET NX`.
    /// A changed epoch empties the cache: the history it described is gone.
    func adoptEpoch(_ stored: String?) throws(StoreError) {
        var value = stored.flatMap { UInt32($0) }
        if stored == nil && isReadOnly {
            throw .storage(
                "Redis at \(address)\(address.database == 0 ? "/0" : "") holds no Longlink store: no key "
                    + "\(keys.prefix):epoch (check the address, the database number and the key prefix; a store read "
                    + "from is opened read-only, nothing is created)",
                retryable: false
            )
        }
        if value == nil {
            let fresh = UInt32.random(in: 1...UInt32.max)
            try command([Array("SET".utf8), keys.epoch, Array(String(fresh).utf8), Array("NX".utf8)])
            value = try command([Array("GET".utf8), keys.epoch]).string.flatMap { UInt32($0) }
        }
        guard let value else { throw .storage("Redis at \(address): the epoch key \(keys.prefix):epoch is not a number", retryable: false) }
        if value != epoch {
            epoch = value
            cache.removeAll()
        }
    }

    /// One command; an error reply is thrown as a non-retryable `.storage`.
    @discardableResult
    func command(_ arguments: [[UInt8]]) throws(StoreError) -> RedisReply {
        let reply = try pipeline([arguments])[0]
        if case .error(let message) = reply { throw .storage("Redis at \(address): \(message)", retryable: false) }
        return reply
    }

    /// Sends commands in one round trip; error replies are returned in place.
    func pipeline(_ commands: [[[UInt8]]]) throws(StoreError) -> [RedisReply] {
        let connection = try connected()
        do {
            return try connection.pipeline(commands)
        } catch {
            self.connection = nil
            throw .storage("Redis at \(address) is unreachable: \(error)", retryable: true)
        }
    }

    /// `EVALSHA` of one of `RedisScripts`, or `EVAL` when the server does not know it (`NOSCRIPT`).
    func evaluate(_ script: String, keys scriptKeys: [[UInt8]], arguments: [[UInt8]]) throws(StoreError) -> RedisReply {
        let reply = try pipeline([evalCommand(script, keys: scriptKeys, arguments: arguments)])[0]
        if case .error(let message) = reply, message.hasPrefix("NOSCRIPT") {
            let again = try pipeline([[Array("EVAL".utf8), Array(script.utf8), Array(String(scriptKeys.count).utf8)] + scriptKeys + arguments])[0]
            if case .error(let message) = again { throw .storage("Redis at \(address): \(message)", retryable: false) }
            return again
        }
        if case .error(let message) = reply { throw .storage("Redis at \(address): \(message)", retryable: false) }
        return reply
    }

    /// The `EVALSHA` command for a script.
    func evalCommand(_ script: String, keys scriptKeys: [[UInt8]], arguments: [[UInt8]]) -> [[UInt8]] {
        let sha = scriptHashes[script] ?? ""
        return [Array("EVALSHA".utf8), Array(sha.utf8), Array(String(scriptKeys.count).utf8)] + scriptKeys + arguments
    }

    /// The open connection, reconnecting (with `AUTH`, scripts and the epoch) when there is none.
    private func connected() throws(StoreError) -> RedisBlockingConnection {
        guard !closed else { throw .closed }
        if let connection, !connection.isBroken { return connection }
        connection = nil
        let fresh: RedisBlockingConnection
        do {
            fresh = try RedisBlockingConnection(address, password: password, timeout: timeout)
            for script in RedisScripts.all {
                scriptHashes[script] = try fresh.command(["SCRIPT", "LOAD", script]).string
            }
        } catch {
            throw .storage("Redis at \(address) is unreachable: \(error)", retryable: true)
        }
        connection = fresh
        let stored = try command([Array("GET".utf8), keys.epoch]).string
        try adoptEpoch(stored)
        return fresh
    }
}

/// An order's identity as a dictionary key.
struct OrderKey: Hashable {
    var line: BusinessLine
    var id: OrderID
}

/// What the store knows of an order: its snapshot (nil when it does not exist) and its write token.
struct CachedOrder {
    var snapshot: OrderSnapshot?
    var token: String
}

@available(*, unavailable)
extension RedisOrderStore: Sendable {}
