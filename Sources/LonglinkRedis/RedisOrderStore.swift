public import LonglinkCore

/// An `OrderStore` in Redis, shared by every gateway node of a deployment: on one server (`redis://`) or on a
/// Redis Cluster (`redis-cluster://`).
///
/// Layout (see `RedisKeys`): each order's snapshot in a hash, its history in a stream whose entry ids are the
/// offsets (`XADD … MAXLEN` keeps `StoreRetention.maxRecordsPerOrder`), its idempotency keys in a hash, and three
/// sorted sets for walking orders and for `expire`. The epoch is a key created with `SET NX`: a flushed or
/// replaced Redis has lost it, so the next call creates a new epoch and clients holding positions of the old one
/// get `recovered = false` honestly. (A Redis restored from an older RDB keeps its epoch but may have lost the
/// last records: run Redis with `appendonly yes` and `appendfsync always` — or `everysec`, accepting up to a
/// second — when this matters.)
///
/// On a cluster an order's keys share the hash tag `{LINE/ID}`, and the sorted sets and the epoch exist once per
/// hash slot, so everything the apply script touches is in the order's slot. Positions carry their slot's epoch
/// (`epoch(of:_:)`), created at random when the slot is first used and again when its shard lost its data.
/// Commands are pipelined per node through `RedisClusterClient`, which follows `MOVED`/`ASK` and waits out
/// failovers briefly (then the call fails retryably).
///
/// Applying a change: the snapshot comes from a small cache (or one read), `ChangeValidation.prepare` validates
/// it in Swift, and one Lua script (`RedisScripts.apply`) does the rest atomically: checks the epoch, replays an
/// idempotency key, compares the order's write token with the one the validation saw (so two nodes can never
/// both move an order from the same state — the loser re-validates against the winner's snapshot), appends the
/// record, updates the snapshot and publishes the record to the route's channel (`PUBLISH`, or `SPUBLISH` on a
/// cluster). The record therefore reaches every node's broker from Redis itself; a node must not publish it
/// again. `applyBatch` sends the scripts of a whole batch as one pipeline (per node). With
/// `RedisDurability.replicas > 0` a `WAIT` follows each node's scripts, and records are published only once it
/// confirmed them (see `RedisDurability`).
///
/// A lost connection is reopened on the next call; while Redis is unreachable every call throws
/// `StoreError.storage(…, retryable: true)` (wire code `unavailable`). A change whose reply was lost with the
/// connection may or may not be stored: publishers retry with the same idempotency key.
///
/// Owned by one thread (the Store's writer), like every store; not `Sendable`.
public final class RedisOrderStore: OrderStore {
    /// The state machines changes are validated against.
    public let catalog: StateMachineCatalog
    /// How much history is kept.
    public let retention: StoreRetention
    /// The channel scheme records are published with; nil publishes nothing.
    public let channels: RedisChannelScheme?
    /// The key prefix (default `longlink`).
    public let prefix: String
    /// When a change is acknowledged.
    public let durability: RedisDurability
    /// Whether the store was opened for reading only (`readOnly`): it never creates an epoch and refuses writes.
    public let isReadOnly: Bool
    let clock: any WallClock
    let keys: RedisKeys
    let link: RedisStoreLink
    /// The epoch of each index slot (one on a server, 16,384 on a cluster), 0 until read (`knownEpoch`).
    var epochs: [UInt32]
    var closed = false
    /// Recently written or read orders, so a change to a known order is one round trip. Entries can be stale
    /// (another node wrote since): the script's write-token check catches that.
    var cache: [OrderKey: CachedOrder] = [:]
    /// Entries kept in `cache` before it is cleared.
    let cacheLimit = 100_000
    /// A walk over every order in progress (see `orders(after:limit:)`).
    var walk: OrderWalk?
    /// What the last `WAIT` short of replicas answered, for the error message.
    var lastWaitAnswer = ""
    /// Records confirmed by `WAIT` whose publish then failed (subscribers get them when they next resume).
    public internal(set) var unpublishedRecords = 0

    /// Opens a store on one server: connects, authenticates, loads the scripts and reads (or creates) the epoch.
    /// - Parameters:
    ///   - address: the server (`redis://HOST:PORT/DB`).
    ///   - password: sent with `AUTH` when given.
    ///   - prefix: the key prefix; deployments sharing a server use different ones.
    ///   - channels: how records are published; nil publishes nothing (no Redis broker).
    ///   - durability: when changes are acknowledged (`WAIT` for replicas, or not).
    ///   - timeout: bounds connecting and every command.
    ///   - readOnly: open an existing store for reading only, as `longlink migrate` reads its source: a Redis
    ///     without the epoch key (no Longlink store under `prefix` in that database) is refused instead of
    ///     getting a new epoch, and writes fail with `.storage`.
    /// - Throws: `.storage(…, retryable: true)` when Redis cannot be reached.
    public convenience init(
        address: RedisAddress,
        password: String? = nil,
        prefix: String = "longlink",
        channels: RedisChannelScheme? = .perRoute,
        durability: RedisDurability = .master,
        catalog: StateMachineCatalog = .builtIn,
        retention: StoreRetention = .standard,
        clock: any WallClock = SystemWallClock(),
        timeout: Duration = .seconds(5),
        readOnly: Bool = false
    ) throws(StoreError) {
        try self.init(
            target: .server(address), password: password, prefix: prefix, channels: channels, durability: durability,
            catalog: catalog, retention: retention, clock: clock, timeout: timeout, readOnly: readOnly
        )
    }

    /// Opens a store on a Redis Cluster: discovers it from the seeds, loads the scripts on every master and reads
    /// (or creates) slot 0's epoch (other slots' when first used). Only per-route channels exist on a cluster (`SPUBLISH` to the order's slot).
    /// With `readOnly` nothing is created: every slot's epoch is read at once, a cluster holding none is refused,
    /// slots without one hold no orders, and writes fail with `.storage`.
    public convenience init(
        cluster: RedisClusterAddress,
        password: String? = nil,
        prefix: String = "longlink",
        publishes: Bool = true,
        durability: RedisDurability = .master,
        catalog: StateMachineCatalog = .builtIn,
        retention: StoreRetention = .standard,
        clock: any WallClock = SystemWallClock(),
        timeout: Duration = .seconds(5),
        readOnly: Bool = false
    ) throws(StoreError) {
        try self.init(
            target: .cluster(cluster), password: password, prefix: prefix, channels: publishes ? .perRoute : nil,
            durability: durability, catalog: catalog, retention: retention, clock: clock, timeout: timeout, readOnly: readOnly
        )
    }

    init(
        target: RedisStoreLink.Target,
        password: String?,
        prefix: String,
        channels: RedisChannelScheme?,
        durability: RedisDurability,
        catalog: StateMachineCatalog,
        retention: StoreRetention,
        clock: any WallClock,
        timeout: Duration,
        readOnly: Bool
    ) throws(StoreError) {
        self.isReadOnly = readOnly
        self.prefix = prefix
        self.channels = channels
        self.durability = durability
        self.catalog = catalog
        self.retention = retention
        self.clock = clock
        if case .cluster = target { keys = RedisKeys(prefix: prefix, clustered: true) } else { keys = RedisKeys(prefix: prefix) }
        link = RedisStoreLink(target, password: password, timeout: timeout)
        epochs = [UInt32](repeating: 0, count: keys.slotCount)
        try link.connect()
        try readEpochs()
    }

    /// Where the data is, for messages (`redis://…` or `redis-cluster://…`).
    public var location: String {
        switch link.target {
        case .server(let address): "\(address)"
        case .cluster(let address): "\(address)"
        }
    }

    /// The epoch of the history: the only one on a server; on a cluster slot 0's (each slot has its own: see
    /// `epoch(of:_:)`).
    public var epoch: UInt32 { epochs[0] }

    /// The epoch of the order's history: the store's on a server; its slot's on a cluster (read when first asked).
    public func epoch(of line: BusinessLine, _ order: OrderID) -> UInt32 {
        let slot = keys.slot(line, order)
        if epochs[slot] == 0 && !closed && !isReadOnly { try? refreshEpoch(slot: slot) }
        return epochs[slot]
    }

    /// Closes the connection. Further calls throw `.closed`.
    public func shutdown() {
        closed = true
        link.close()
        cache.removeAll()
    }

    // MARK: Reads

    public func snapshot(of line: BusinessLine, _ order: OrderID) throws(StoreError) -> OrderSnapshot? {
        try load(OrderKey(line: line, id: order)).snapshot
    }

    public func records(of line: BusinessLine, _ order: OrderID, after position: StreamPosition, limit: Int)
        throws(StoreError) -> HistoryRead
    {
        let key = OrderKey(line: line, id: order)
        let from = position.offset &+ 1
        let replies = try transaction(key, [
            [Array("HGET".utf8), keys.order(line, order), Array("offset".utf8)],
            [Array("XRANGE".utf8), keys.history(line, order), Array("-".utf8), Array("+".utf8), Array("COUNT".utf8), Array("1".utf8)],
            [Array("XRANGE".utf8), keys.history(line, order), Array("\(from)-0".utf8), Array("+".utf8), Array("COUNT".utf8), Array(String(max(1, limit)).utf8)],
        ])
        let epoch = epoch(for: key)
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
        let key = OrderKey(line: line, id: order)
        let replies = try transaction(key, [
            [Array("HGETALL".utf8), keys.order(line, order)],
            [Array("XRANGE".utf8), keys.history(line, order), Array("-".utf8), Array("+".utf8)],
        ])
        let epoch = epoch(for: key)
        guard let stored = RedisRecordCodec.snapshot(RedisRecordCodec.pairs(replies[0]), line: line, order: order, epoch: epoch)
        else { return nil }
        let history = (replies[1].array ?? []).compactMap {
            RedisRecordCodec.record(entry: $0, line: line, order: order, epoch: epoch)
        }
        return (stored.snapshot, history)
    }

    /// Refuses a write on a closed store or one opened read-only.
    func checkWritable() throws(StoreError) {
        guard !closed else { throw .closed }
        if isReadOnly { throw .storage("\(location) was opened read-only", retryable: false) }
    }

    /// The order's snapshot and write token, read fresh (and cached).
    func load(_ key: OrderKey) throws(StoreError) -> CachedOrder {
        try loadAll([key])[0]
    }

    /// Reads several orders (one transaction per slot, pipelined) into the cache; returns them in order.
    @discardableResult
    func loadAll(_ orders: [OrderKey]) throws(StoreError) -> [CachedOrder] {
        try loadEach(orders).map { (result) throws(StoreError) in try result.get() }
    }

    /// `loadAll` with a result per order: on a cluster one shard may be down while the others answer.
    func loadEach(_ orders: [OrderKey]) -> [Result<CachedOrder, StoreError>] {
        let replies = transactionResults(orders.map { ($0, [[Array("HGETALL".utf8), keys.order($0.line, $0.id)]]) })
        return zip(orders, replies).map { key, reply in
            reply.map { reply in
                let stored = RedisRecordCodec.snapshot(RedisRecordCodec.pairs(reply[0]), line: key.line, order: key.id, epoch: epoch(for: key))
                let cached = CachedOrder(snapshot: stored?.snapshot, token: stored?.token ?? "")
                remember(cached, for: key)
                return cached
            }
        }
    }

    func remember(_ order: CachedOrder, for key: OrderKey) {
        if cache.count >= cacheLimit { cache.removeAll(keepingCapacity: true) }
        cache[key] = order
    }

    // MARK: Epochs and transactions

    /// The slot of an order's keys.
    func slot(_ key: OrderKey) -> Int { keys.slot(key.line, key.id) }

    /// The epoch of an order's slot.
    func epoch(for key: OrderKey) -> UInt32 { epochs[slot(key)] }

    /// Runs `commands` (all on `key`'s slot) in `MULTI … EXEC` with a read of the slot's epoch, adopting a changed
    /// epoch first (see `adoptEpoch`). Returns the replies of `commands`.
    func transaction(_ key: OrderKey, _ commands: [[[UInt8]]]) throws(StoreError) -> [RedisReply] {
        try transactions([(key, commands)])[0]
    }

    /// `transaction` for several orders at once: one `MULTI … EXEC` per slot, all pipelined (per node). Returns
    /// each order's replies, in order.
    func transactions(_ work: [(key: OrderKey, commands: [[[UInt8]]])]) throws(StoreError) -> [[RedisReply]] {
        try transactionResults(work).map { (result) throws(StoreError) in try result.get() }
    }

    /// `transactions` with a result per order (the failure of its slot's transaction, if any).
    func transactionResults(_ work: [(key: OrderKey, commands: [[[UInt8]]])]) -> [Result<[RedisReply], StoreError>] {
        guard !closed else { return work.map { _ in .failure(.closed) } }
        var bySlot: [(slot: Int, items: [Int])] = []
        var position: [Int: Int] = [:]
        for (index, item) in work.enumerated() {
            let slot = slot(item.key)
            if let at = position[slot] { bySlot[at].items.append(index) } else {
                position[slot] = bySlot.count
                bySlot.append((slot, [index]))
            }
        }
        let groups = bySlot.map { entry in
            RedisStoreLink.Group(
                slot: entry.slot,
                commands: [[Array("MULTI".utf8)], [Array("GET".utf8), keys.epoch(entry.slot)]] + entry.items.flatMap { work[$0].commands }
                    + [[Array("EXEC".utf8)]],
                replayable: true
            )
        }
        let results = link.run(groups)
        var answers = [Result<[RedisReply], StoreError>](repeating: .success([]), count: work.count)
        // Slots without an epoch yet (new, or their shard lost its data) get theirs in one pipeline afterwards.
        var unborn: [(slot: Int, items: [Int])] = []
        for (entry, result) in zip(bySlot, results) {
            do throws(StoreError) {
                let replies = try result.get()
                let expected = entry.items.reduce(1) { $0 + work[$1].commands.count }
                guard let values = replies.last?.array, values.count == expected else {
                    throw .storage("\(link.name): unexpected transaction reply \(replies.last ?? .null)", retryable: true)
                }
                if values[0] == .null {
                    unborn.append(entry)
                } else if values[0].string != String(epochs[entry.slot]) {
                    try adoptEpoch(values[0].string, slot: entry.slot)
                }
                var at = 1
                for index in entry.items {
                    answers[index] = .success(Array(values[at..<(at + work[index].commands.count)]))
                    at += work[index].commands.count
                }
            } catch {
                for index in entry.items { answers[index] = .failure(error) }
            }
        }
        if !unborn.isEmpty && !isReadOnly {
            do throws(StoreError) {
                try createEpochs(unborn.map(\.slot))
            } catch {
                for entry in unborn { for index in entry.items { answers[index] = .failure(error) } }
            }
        }
        return answers
    }

    /// Reads (or creates) the epoch of slot 0 (the only one on a server); the other slots' are read when first used.
    /// Read-only, every slot's epoch is read in one pipeline (per node) and a store holding none is refused.
    func readEpochs() throws(StoreError) {
        guard isReadOnly, keys.slotCount > 1 else { return try refreshEpoch(slot: 0) }
        let slots = Array(0..<keys.slotCount)
        let groups = slots.map { RedisStoreLink.Group(slot: $0, commands: [[Array("GET".utf8), keys.epoch($0)]], replayable: true) }
        for (slot, result) in zip(slots, link.run(groups)) {
            let stored = try result.get()[0].string
            if stored != nil { try adoptEpoch(stored, slot: slot) }
        }
        if !epochs.contains(where: { $0 != 0 }) { throw missingStore(slot: 0) }
    }

    /// The epoch of `slot`, read (or created) first when this store has not seen it yet.
    func knownEpoch(slot: Int) throws(StoreError) -> UInt32 {
        if epochs[slot] == 0 { try refreshEpoch(slot: slot) }
        return epochs[slot]
    }

    /// Takes the epoch stored for `slot`; when none is stored (a flushed Redis, a shard that lost its data),
    /// creates a new one. A changed epoch empties the cache: the history it described is gone.
    func adoptEpoch(_ stored: String?, slot: Int) throws(StoreError) {
        guard let value = stored.flatMap({ UInt32($0) }) else {
            if stored != nil {
                throw .storage("\(link.name): the epoch key \(String(decoding: keys.epoch(slot), as: UTF8.self)) is not a number", retryable: false)
            }
            // Read-only: a server without the key holds no store; a cluster slot without one holds no orders.
            if isReadOnly {
                if keys.slotCount > 1 { return }
                throw missingStore(slot: slot)
            }
            return try createEpochs([slot])
        }
        if value != epochs[slot] {
            epochs[slot] = value
            cache.removeAll()
        }
    }

    /// The refusal of a read-only store where no Longlink store is.
    private func missingStore(slot: Int) -> StoreError {
        let place: String
        switch link.target {
        case .server(let address): place = "Redis at \(address)\(address.database == 0 ? "/0" : "")"
        case .cluster(let address): place = "Redis Cluster at \(address)"
        }
        return .storage(
            "\(place) holds no Longlink store: no key \(String(decoding: keys.epoch(slot), as: UTF8.self)) "
                + "(check the address, the database number and the key prefix; a store read from is opened read-only, "
                + "nothing is created)",
            retryable: false
        )
    }

    /// Reads the epoch of `slot` again (after the apply script answered `EPOCH`).
    func refreshEpoch(slot: Int) throws(StoreError) {
        let replies = try link.run(.init(slot: slot, commands: [[Array("GET".utf8), keys.epoch(slot)]], replayable: true))
        try adoptEpoch(replies[0].string, slot: slot)
    }

    /// `SET epoch NEW NX` then `GET` for each slot (another node may have created it first: its value wins). A new
    /// epoch is random, so a slot that lost its data never gets its old epoch back.
    private func createEpochs(_ slots: [Int]) throws(StoreError) {
        let fresh = Array(String(UInt32.random(in: 1...UInt32.max)).utf8)
        let groups = slots.map { slot in
            RedisStoreLink.Group(
                slot: slot,
                commands: [[Array("SET".utf8), keys.epoch(slot), fresh, Array("NX".utf8)], [Array("GET".utf8), keys.epoch(slot)]],
                replayable: true
            )
        }
        for (slot, result) in zip(slots, link.run(groups)) {
            let replies = try result.get()
            if case .error(let message) = replies[0] { throw .storage("\(link.name): \(message)", retryable: false) }
            guard let value = replies[1].string.flatMap({ UInt32($0) }) else {
                throw .storage("\(link.name): the epoch of slot \(slot) could not be created", retryable: true)
            }
            if value != epochs[slot] {
                epochs[slot] = value
                cache.removeAll()
            }
        }
    }

    /// One script on `key`'s slot: `EVALSHA`, or `EVAL` when the node does not know it (`NOSCRIPT`). An error
    /// reply is thrown as a non-retryable `.storage`. With `trailer` (a `WAIT`), returns its replies after the
    /// script's.
    func evaluate(_ script: String, slot: Int, keys scriptKeys: [[UInt8]], arguments: [[UInt8]], trailer: [[[UInt8]]] = [])
        throws(StoreError) -> [RedisReply]
    {
        var replies = try link.run(
            .init(slot: slot, commands: [link.evalCommand(script, keys: scriptKeys, arguments: arguments)], replayable: false),
            trailer: trailer
        )
        if case .error(let message) = replies[0], message.hasPrefix("NOSCRIPT") {
            replies = try link.run(
                .init(slot: slot, commands: [RedisStoreLink.evalSourceCommand(script, keys: scriptKeys, arguments: arguments)], replayable: false),
                trailer: trailer
            )
        }
        if case .error(let message) = replies[0] { throw .storage("\(link.name): \(message)", retryable: false) }
        return replies
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
