public import LonglinkCore

/// Feature toggles in Redis, beside the orders of the `RedisOrderStore`s under the same key prefix, on one server
/// (`redis://`) or on a Redis Cluster (`redis-cluster://`), on a connection of its own.
///
/// Layout: one hash, `P:toggles` (on a cluster `P:toggles:{config}`, so every toggle is in one slot), with a
/// field per toggle, `APP/NAME`, holding `EPOCH:OFFSET:UPDATED_MS:KIND:TEXT` (`KIND` is `b`, `r` or `s`; `TEXT` is
/// `1`/`0`, the percentage, or the string). Toggle positions carry the store's epoch key, the orders' `P:epoch`
/// on one server and the epoch of the toggles' slot on a cluster (`P:epoch:{S}`), so a flushed Redis (or a shard
/// that lost the slot) starts a new epoch for toggles as for orders. `setToggle` and `importToggle` are each one
/// Lua script, so two nodes setting one toggle at once get consecutive offsets.
///
/// With `RedisDurability.replicas > 0` a `WAIT` follows each write, and a write the replicas did not confirm in time
/// fails retryably (the master has it; setting it again moves it to the next offset, importing it again is
/// identical). A lost connection is reopened on the next call; while Redis is unreachable every call throws
/// `StoreError.storage(…, retryable: true)`. Owned by one thread at a time, like every store; not `Sendable`.
public final class RedisToggleStore: ToggleStore {
    /// The key prefix (default `longlink`).
    public let prefix: String
    /// Whether the store was opened for reading only: it creates nothing and refuses writes.
    public let isReadOnly: Bool
    /// When a write is acknowledged.
    public let durability: RedisDurability
    /// The epoch of toggle positions (0 while a read-only store finds none).
    public private(set) var epoch: UInt32 = 0
    private let link: RedisStoreLink
    /// The toggles hash and the epoch key of its slot.
    private let hash: [UInt8]
    private let epochKey: [UInt8]
    private let slot: Int
    private var closed = false
    /// How often a write is retried when the stored toggle or the epoch changed underneath.
    private static let maxAttempts = 8

    /// Opens the toggles on one server: connects, authenticates and reads (or creates) the epoch.
    /// - Parameters:
    ///   - address: the server (`redis://HOST:PORT/DB`).
    ///   - password: sent with `AUTH` when given.
    ///   - prefix: the key prefix, the same as the deployment's `RedisOrderStore`.
    ///   - durability: when a write is acknowledged (`WAIT` for replicas, or not), as for the order store.
    ///   - timeout: bounds connecting and every command.
    ///   - readOnly: for `longlink migrate`'s source: nothing is created and writes fail with `.storage`.
    /// - Throws: `.storage(…, retryable: true)` when Redis cannot be reached.
    public convenience init(
        address: RedisAddress,
        password: String? = nil,
        prefix: String = "longlink",
        durability: RedisDurability = .master,
        timeout: Duration = .seconds(5),
        readOnly: Bool = false
    ) throws(StoreError) {
        try self.init(
            target: .server(address), password: password, prefix: prefix, durability: durability, timeout: timeout, readOnly: readOnly
        )
    }

    /// Opens the toggles on a Redis Cluster, discovering it from the seeds.
    public convenience init(
        cluster: RedisClusterAddress,
        password: String? = nil,
        prefix: String = "longlink",
        durability: RedisDurability = .master,
        timeout: Duration = .seconds(5),
        readOnly: Bool = false
    ) throws(StoreError) {
        try self.init(
            target: .cluster(cluster), password: password, prefix: prefix, durability: durability, timeout: timeout, readOnly: readOnly
        )
    }

    init(
        target: RedisStoreLink.Target,
        password: String?,
        prefix: String,
        durability: RedisDurability,
        timeout: Duration,
        readOnly: Bool
    ) throws(StoreError) {
        self.prefix = prefix
        self.isReadOnly = readOnly
        self.durability = durability
        if case .cluster = target {
            hash = Array("\(prefix):toggles:{config}".utf8)
            slot = RedisClusterSlot.of(hash)
            epochKey = RedisKeys(prefix: prefix, clustered: true).epoch(slot)
        } else {
            hash = Array("\(prefix):toggles".utf8)
            slot = 0
            epochKey = RedisKeys(prefix: prefix).epoch(0)
        }
        link = RedisStoreLink(target, password: password, timeout: timeout)
        try link.connect()
        try readEpoch()
    }

    public func setToggle(app: String, name: String, value: ToggleValue, nowMillis: UInt64) throws(StoreError) -> FeatureToggle {
        try checkWritable()
        guard var toggle = FeatureToggle(app: app, name: name, value: value) else { throw .invalidToggle(app: app, name: name) }
        let (kind, text) = Self.columns(value)
        let replies = try evaluate(
            Self.setScript,
            arguments: [field(app, name), fresh(), Array(String(nowMillis).utf8), Array(kind.utf8), Array(text.utf8)]
        )
        guard let answer = replies.array, answer.count == 2, let stored = answer[0].string.flatMap({ UInt32($0) }),
            let offset = answer[1].integer, offset >= 1
        else { throw .storage("\(link.name): unexpected toggle reply \(replies)", retryable: false) }
        epoch = stored
        toggle.position = StreamPosition(epoch: stored, offset: UInt64(offset))
        toggle.updatedAtMillis = nowMillis
        return toggle
    }

    public func toggles(app: String?) throws(StoreError) -> [FeatureToggle] {
        guard !closed else { throw .closed }
        let replies = try link.run(.init(slot: slot, commands: [[Array("HGETALL".utf8), hash]], replayable: true))
        var toggles: [FeatureToggle] = []
        for (field, value) in RedisRecordCodec.pairs(replies.first) {
            guard let toggle = Self.toggle(field: field, value: value) else {
                throw .storage("\(link.name): the toggle \(field) in \(String(decoding: hash, as: UTF8.self)) is unreadable", retryable: false)
            }
            if app == nil || toggle.app == app { toggles.append(toggle) }
        }
        return toggles.sorted { ($0.app, $0.name) < ($1.app, $1.name) }
    }

    public func toggle(app: String, name: String) throws(StoreError) -> FeatureToggle? {
        guard !closed else { throw .closed }
        guard FeatureToggle(app: app, name: name, value: .bool(false)) != nil else { return nil }
        let field = "\(app)/\(name)"
        let replies = try link.run(.init(slot: slot, commands: [[Array("HGET".utf8), hash, Array(field.utf8)]], replayable: true))
        guard case .bulk(let value)? = replies.first else { return nil }
        guard let toggle = Self.toggle(field: field, value: value) else {
            throw .storage("\(link.name): the toggle \(field) is unreadable", retryable: false)
        }
        return toggle
    }

    @discardableResult
    public func importToggle(_ toggle: FeatureToggle, policy: ImportPolicy) throws(StoreError) -> ImportOutcome {
        try checkWritable()
        guard toggle.position.offset >= 1 else { throw .invalidField("toggle \(toggle.app)/\(toggle.name): offset 0") }
        let (kind, text) = Self.columns(toggle.value)
        let field = field(toggle.app, toggle.name)
        for _ in 0..<Self.maxAttempts {
            try createEpoch()
            let replies = try link.run(.init(slot: slot, commands: [[Array("HGET".utf8), hash, field]], replayable: true))
            let storedText: [UInt8]
            if case .bulk(let bytes)? = replies.first { storedText = bytes } else { storedText = [] }
            let stored = storedText.isEmpty ? nil : Self.toggle(field: "\(toggle.app)/\(toggle.name)", value: storedText)
            var imported = toggle
            imported.position.epoch = epoch
            let outcome = try ChangeValidation.importOutcome(stored: stored, imported: imported, policy: policy)
            if outcome == .identical { return .identical }
            let written = Array("\(toggle.position.offset):\(toggle.updatedAtMillis):\(kind):\(text)".utf8)
            let answer = try evaluate(Self.importScript, arguments: [field, storedText, Array(String(epoch).utf8), written])
            switch answer.string {
            case "OK": return outcome
            case "STALE", "EPOCH": continue
            default: throw .storage("\(link.name): unexpected toggle import reply \(answer)", retryable: false)
            }
        }
        throw .storage("toggle \(toggle.app)/\(toggle.name) kept changing during its import; retry", retryable: true)
    }

    /// Closes the connection. Further calls throw `.closed`.
    public func shutdown() {
        closed = true
        link.close()
    }

    // MARK: Helpers

    private func checkWritable() throws(StoreError) {
        guard !closed else { throw .closed }
        if isReadOnly { throw .storage("\(link.name) was opened read-only", retryable: false) }
    }

    /// Reads the epoch; creates it when missing unless read-only.
    private func readEpoch() throws(StoreError) {
        if !isReadOnly { return try createEpoch() }
        let replies = try link.run(.init(slot: slot, commands: [[Array("GET".utf8), epochKey]], replayable: true))
        epoch = replies.first?.string.flatMap { UInt32($0) } ?? 0
    }

    /// `SET epoch NEW NX` then `GET` (another node or the order store may have created it first: its value wins).
    private func createEpoch() throws(StoreError) {
        let replies = try link.run(
            .init(slot: slot, commands: [[Array("SET".utf8), epochKey, fresh(), Array("NX".utf8)], [Array("GET".utf8), epochKey]], replayable: true)
        )
        if case .error(let message)? = replies.first { throw .storage("\(link.name): \(message)", retryable: false) }
        guard replies.count == 2, let value = replies[1].string.flatMap({ UInt32($0) }) else {
            throw .storage("\(link.name): the epoch \(String(decoding: epochKey, as: UTF8.self)) could not be read", retryable: true)
        }
        epoch = value
    }

    /// Runs a script on the toggles' slot with the hash and the epoch key as its keys, then `WAIT` when the
    /// durability asks for replicas (a write they did not confirm in time fails retryably).
    private func evaluate(_ script: String, arguments: [[UInt8]]) throws(StoreError) -> RedisReply {
        let command = RedisStoreLink.evalSourceCommand(script, keys: [hash, epochKey], arguments: arguments)
        let trailer = durability.waits ? [durability.waitCommand] : []
        let replies = try link.run(.init(slot: slot, commands: [command], replayable: false), trailer: trailer)
        guard let reply = replies.first else { throw .storage("\(link.name): no reply", retryable: true) }
        if case .error(let message) = reply { throw .storage("\(link.name): \(message)", retryable: false) }
        if durability.waits {
            let confirmed = replies.count > 1 ? replies[1].integer ?? 0 : 0
            guard confirmed >= Int64(durability.replicas) else {
                throw .storage(
                    "\(link.name): \(confirmed) of \(durability.replicas) replicas confirmed the toggle write (\(durability))",
                    retryable: true
                )
            }
        }
        return reply
    }

    private func field(_ app: String, _ name: String) -> [UInt8] { Array("\(app)/\(name)".utf8) }

    /// A new random epoch, for when none exists.
    private func fresh() -> [UInt8] { Array(String(UInt32.random(in: 1...UInt32.max)).utf8) }

    /// The toggle a hash field holds, nil when it is unreadable.
    static func toggle(field: String, value: [UInt8]) -> FeatureToggle? {
        let parts = field.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        let columns = String(decoding: value, as: UTF8.self).split(separator: ":", maxSplits: 4, omittingEmptySubsequences: false)
        guard parts.count == 2, columns.count == 5, let epoch = UInt32(columns[0]), let offset = UInt64(columns[1]),
            let updated = UInt64(columns[2]), let value = Self.value(kind: String(columns[3]), text: String(columns[4]))
        else { return nil }
        return FeatureToggle(
            app: String(parts[0]),
            name: String(parts[1]),
            value: value,
            position: StreamPosition(epoch: epoch, offset: offset),
            updatedAtMillis: updated
        )
    }

    static func columns(_ value: ToggleValue) -> (String, String) {
        switch value {
        case .bool(let on): ("b", on ? "1" : "0")
        case .rollout(let percent): ("r", String(percent))
        case .string(let text): ("s", text)
        }
    }

    static func value(kind: String, text: String) -> ToggleValue? {
        switch kind {
        case "b": .bool(text == "1")
        case "r": Int(text).map { .rollout(percent: $0) }
        case "s": .string(text)
        default: nil
        }
    }

    /// KEYS: the hash, the epoch key. ARGV: the field, a fresh epoch, the time, the kind, the text. Creates the
    /// epoch when missing, then stores the value at the next offset (1 when the stored one is of another epoch);
    /// returns `{epoch, offset}`.
    static let setScript = """
        redis.call('SET', KEYS[2], ARGV[2], 'NX')
        local epoch = redis.call('GET', KEYS[2])
        local offset = 1
        local stored = redis.call('HGET', KEYS[1], ARGV[1])
        if stored then
            local e, o = string.match(stored, '^(%d+):(%d+):')
            if e == epoch then offset = tonumber(o) + 1 end
        end
        redis.call('HSET', KEYS[1], ARGV[1], epoch .. ':' .. string.format('%d', offset) .. ':' .. ARGV[3] .. ':' .. ARGV[4] .. ':' .. ARGV[5])
        return {epoch, offset}
        """

    /// KEYS: the hash, the epoch key. ARGV: the field, the value the decision saw (empty: none), the epoch it saw,
    /// the value to write without its epoch. Writes only when both are still as seen: `OK`, else `STALE`/`EPOCH`.
    static let importScript = """
        local epoch = redis.call('GET', KEYS[2])
        if epoch ~= ARGV[3] then return 'EPOCH' end
        local stored = redis.call('HGET', KEYS[1], ARGV[1])
        if (stored or '') ~= ARGV[2] then return 'STALE' end
        redis.call('HSET', KEYS[1], ARGV[1], epoch .. ':' .. ARGV[4])
        return 'OK'
        """
}

@available(*, unavailable)
extension RedisToggleStore: Sendable {}
