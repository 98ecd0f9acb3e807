public import LonglinkCore

/// Applying changes: Swift-side validation (`ChangeValidation`), then the apply script (see `RedisScripts.apply`).
extension RedisOrderStore {
    /// How often a change is re-validated after losing the write-token race before giving up (retryable).
    static let maxAttempts = 32

    public func apply(_ change: OrderChange) throws(StoreError) -> AppliedChange {
        try applyOne(change)
    }

    /// Pipelines the batch: orders missing from the cache are read in one transaction, every change is validated
    /// against the snapshot its predecessors in the batch produce, and all scripts go out in one round trip.
    /// Anything that did not simply succeed (a refusal, a replay, a lost race, an unknown script) is then redone
    /// one by one through `apply`, in batch order, so each change still succeeds or fails on its own.
    public func applyBatch(_ changes: [OrderChange]) -> [Result<AppliedChange, StoreError>] {
        guard !changes.isEmpty else { return [] }
        do {
            try checkWritable()
        } catch {
            return changes.map { _ in .failure(error) }
        }
        if changes.count == 1 { return [Result { () throws(StoreError) in try applyOne(changes[0]) }] }
        var results = [Result<AppliedChange, StoreError>?](repeating: nil, count: changes.count)
        var redo = Set<Int>()
        do {
            let missing = Set(changes.map(Self.key)).filter { cache[$0] == nil }
            if !missing.isEmpty { try loadAll(Array(missing)) }
            var working: [OrderKey: CachedOrder] = [:]
            var tainted = Set<OrderKey>()
            var calls: [(index: Int, key: OrderKey, prepared: ChangeValidation.Prepared, token: String)] = []
            var commands: [[[UInt8]]] = []
            for (index, change) in changes.enumerated() {
                let key = Self.key(change)
                guard !tainted.contains(key), let current = working[key] ?? cache[key],
                    let prepared = try? prepare(change, current.snapshot)
                else {
                    tainted.insert(key)
                    redo.insert(index)
                    continue
                }
                let token = Self.newToken()
                working[key] = CachedOrder(snapshot: prepared.snapshot, token: token)
                calls.append((index, key, prepared, token))
                commands.append(applyCommand(prepared, expected: current, token: token))
            }
            let replies = commands.isEmpty ? [] : try pipeline(commands)
            var failed = Set<OrderKey>()
            for (call, reply) in zip(calls, replies) {
                if !failed.contains(call.key), reply.array?.first?.string == "OK" {
                    remember(CachedOrder(snapshot: call.prepared.snapshot, token: call.token), for: call.key)
                    results[call.index] = .success(
                        AppliedChange(record: call.prepared.record, snapshot: call.prepared.snapshot, deduplicated: false)
                    )
                } else {
                    failed.insert(call.key)
                    cache[call.key] = nil
                    redo.insert(call.index)
                }
            }
        } catch {
            for index in changes.indices where results[index] == nil { results[index] = .failure(error) }
            return results.map { $0! }
        }
        for index in redo.sorted() {
            results[index] = Result { () throws(StoreError) in try applyOne(changes[index]) }
        }
        return results.map { $0! }
    }

    /// One change: validate against the cached (or read) snapshot, run the script, and on a lost race or a
    /// changed epoch re-validate against what Redis holds.
    func applyOne(_ change: OrderChange) throws(StoreError) -> AppliedChange {
        try checkWritable()
        let key = Self.key(change)
        var fresh = false
        var current: CachedOrder
        if let cached = cache[key] {
            current = cached
        } else {
            current = try load(key)
            fresh = true
        }
        for _ in 0..<Self.maxAttempts {
            let prepared: ChangeValidation.Prepared
            do {
                prepared = try prepare(change, current.snapshot)
            } catch {
                // A replayed key wins over validation (the replay of `created` is not an illegal transition).
                if let replay = try replayed(change) { return replay }
                guard fresh else {
                    current = try load(key)
                    fresh = true
                    continue
                }
                throw error
            }
            let token = Self.newToken()
            let reply = try evaluate(
                RedisScripts.apply,
                keys: scriptKeys(key),
                arguments: applyArguments(prepared, expected: current, token: token)
            )
            let parts = reply.array ?? []
            switch parts.first?.string {
            case "OK":
                remember(CachedOrder(snapshot: prepared.snapshot, token: token), for: key)
                return AppliedChange(record: prepared.record, snapshot: prepared.snapshot, deduplicated: false)
            case "DUP" where parts.count == 3:
                let stored = RedisRecordCodec.snapshot(RedisRecordCodec.pairs(parts[2]), line: key.line, order: key.id, epoch: epoch)
                guard let stored, let record = RedisRecordCodec.record(entry: parts[1], line: key.line, order: key.id, epoch: epoch)
                else { throw .storage("Redis at \(address): unreadable replay of \(change.route)", retryable: false) }
                remember(CachedOrder(snapshot: stored.snapshot, token: stored.token), for: key)
                try ChangeValidation.checkReplay(change, of: record)
                return AppliedChange(record: record, snapshot: stored.snapshot, deduplicated: true)
            case "STALE" where parts.count == 2:
                current = staleOrder(parts[1], key: key)
                fresh = true
            case "EPOCH":
                current = try orderAfterEpochChange(key)
                fresh = true
            default:
                throw .storage("Redis at \(address): unexpected apply reply \(reply)", retryable: false)
            }
        }
        throw .storage("\(change.route) changed \(Self.maxAttempts) times while this change was validated; retry", retryable: true)
    }

    /// Records another store committed, one script each (see `ChangeValidation.prepareCommitted`).
    public func applyCommittedBatch(_ records: [OrderChangeRecord]) -> [Result<AppliedChange, StoreError>] {
        records.map { record in Result { () throws(StoreError) in try applyCommittedOne(record) } }
    }

    /// One committed record: checked against the cached (or read) snapshot, appended by the apply script with the
    /// write-token check, or compared with the stored record at its offset.
    func applyCommittedOne(_ record: OrderChangeRecord) throws(StoreError) -> AppliedChange {
        try checkWritable()
        let key = OrderKey(line: record.line, id: record.orderID)
        var fresh = false
        var current: CachedOrder
        if let cached = cache[key] {
            current = cached
        } else {
            current = try load(key)
            fresh = true
        }
        for _ in 0..<Self.maxAttempts {
            let step: ChangeValidation.CommittedStep
            do {
                step = try ChangeValidation.prepareCommitted(record, current: current.snapshot, catalog: catalog, epoch: epoch)
            } catch {
                guard fresh else {
                    current = try load(key)
                    fresh = true
                    continue
                }
                throw error
            }
            switch step {
            case .compare(let offset):
                guard fresh, let snapshot = current.snapshot else {
                    current = try load(key)
                    fresh = true
                    continue
                }
                let entry = try transaction([
                    [Array("XRANGE".utf8), keys.history(key.line, key.id), Array("\(offset)-0".utf8), Array("\(offset)-0".utf8)]
                ])[0].array?.first
                let stored = entry.flatMap { RedisRecordCodec.record(entry: $0, line: key.line, order: key.id, epoch: epoch) }
                return try ChangeValidation.heldRecord(record, stored: stored, current: snapshot)
            case .append(let prepared):
                let token = Self.newToken()
                let reply = try evaluate(
                    RedisScripts.apply,
                    keys: scriptKeys(key),
                    arguments: applyArguments(prepared, expected: current, token: token)
                )
                let parts = reply.array ?? []
                switch parts.first?.string {
                case "OK":
                    remember(CachedOrder(snapshot: prepared.snapshot, token: token), for: key)
                    return AppliedChange(record: prepared.record, snapshot: prepared.snapshot, deduplicated: false)
                case "DUP" where parts.count == 3:
                    // The record's idempotency key is held by another record of the order.
                    let stored = RedisRecordCodec.record(entry: parts[1], line: key.line, order: key.id, epoch: epoch)
                    throw .conflict(
                        "\(record.line)/\(record.orderID): the idempotency key of the record at offset "
                            + "\(record.position.offset) is held by the record at offset \(stored?.position.offset ?? 0)"
                    )
                case "STALE" where parts.count == 2:
                    current = staleOrder(parts[1], key: key)
                    fresh = true
                case "EPOCH":
                    current = try orderAfterEpochChange(key)
                    fresh = true
                default:
                    throw .storage("Redis at \(address): unexpected apply reply \(reply)", retryable: false)
                }
            }
        }
        throw .storage("\(record.route) changed \(Self.maxAttempts) times while its record was stored; retry", retryable: true)
    }

    /// The order as the script found it when it refused a stale write token (`STALE` with the stored snapshot), cached.
    private func staleOrder(_ reply: RedisReply, key: OrderKey) -> CachedOrder {
        let stored = RedisRecordCodec.snapshot(RedisRecordCodec.pairs(reply), line: key.line, order: key.id, epoch: epoch)
        let order = CachedOrder(snapshot: stored?.snapshot, token: stored?.token ?? "")
        remember(order, for: key)
        return order
    }

    /// The order read again after the script said the epoch changed (`EPOCH`: Redis lost its data), with the new epoch.
    private func orderAfterEpochChange(_ key: OrderKey) throws(StoreError) -> CachedOrder {
        try adoptEpoch(try command([Array("GET".utf8), keys.epoch]).string)
        return try load(key)
    }

    /// The first record of a replayed idempotency key with the current snapshot, or nil; `idempotencyConflict` when
    /// the key's record is a different change.
    private func replayed(_ change: OrderChange) throws(StoreError) -> AppliedChange? {
        guard !change.idempotencyKey.isEmpty else { return nil }
        let key = Self.key(change)
        let offset = try transaction([[Array("HGET".utf8), keys.keys(key.line, key.id), Array(change.idempotencyKey.utf8)]])[0]
        guard let offset = offset.string else { return nil }
        let replies = try transaction([
            [Array("XRANGE".utf8), keys.history(key.line, key.id), Array("\(offset)-0".utf8), Array("\(offset)-0".utf8)],
            [Array("HGETALL".utf8), keys.order(key.line, key.id)],
        ])
        guard let entry = replies[0].array?.first,
            let record = RedisRecordCodec.record(entry: entry, line: key.line, order: key.id, epoch: epoch),
            let stored = RedisRecordCodec.snapshot(RedisRecordCodec.pairs(replies[1]), line: key.line, order: key.id, epoch: epoch)
        else { return nil }
        remember(CachedOrder(snapshot: stored.snapshot, token: stored.token), for: key)
        try ChangeValidation.checkReplay(change, of: record)
        return AppliedChange(record: record, snapshot: stored.snapshot, deduplicated: true)
    }

    private func prepare(_ change: OrderChange, _ current: OrderSnapshot?) throws(StoreError) -> ChangeValidation.Prepared {
        try ChangeValidation.prepare(change, current: current, catalog: catalog, epoch: epoch, nowMillis: clock.nowMillis())
    }

    /// Reads several orders in one transaction into the cache.
    private func loadAll(_ orders: [OrderKey]) throws(StoreError) {
        let replies = try transaction(orders.map { [Array("HGETALL".utf8), keys.order($0.line, $0.id)] })
        for (key, reply) in zip(orders, replies) {
            let stored = RedisRecordCodec.snapshot(RedisRecordCodec.pairs(reply), line: key.line, order: key.id, epoch: epoch)
            remember(CachedOrder(snapshot: stored?.snapshot, token: stored?.token ?? ""), for: key)
        }
    }

    /// The apply script's keys for an order.
    func scriptKeys(_ key: OrderKey) -> [[UInt8]] {
        [
            keys.order(key.line, key.id), keys.history(key.line, key.id), keys.keys(key.line, key.id), keys.epoch,
            keys.orders, keys.terminal, keys.aging,
        ]
    }

    private func applyCommand(_ prepared: ChangeValidation.Prepared, expected: CachedOrder, token: String) -> [[UInt8]] {
        let record = prepared.record
        return evalCommand(
            RedisScripts.apply,
            keys: scriptKeys(OrderKey(line: record.line, id: record.orderID)),
            arguments: applyArguments(prepared, expected: expected, token: token)
        )
    }

    /// The apply script's arguments for a prepared record (the record carries the idempotency key and the order).
    private func applyArguments(_ prepared: ChangeValidation.Prepared, expected: CachedOrder, token: String) -> [[UInt8]] {
        let record = prepared.record
        let snapshot = RedisRecordCodec.snapshotFields(prepared.snapshot)
        let terminal = ChangeValidation.isTerminal(prepared.snapshot, catalog: catalog)
        var arguments: [[UInt8]] = [
            Array(String(epoch).utf8),
            Array(expected.token.utf8),
            Array(token.utf8),
            Array(record.idempotencyKey.utf8),
            RedisRecordCodec.digits(record.position.offset),
            Array(String(max(1, retention.maxRecordsPerOrder)).utf8),
            channels.map { Array($0.channel(for: record.route, prefix: prefix).utf8) } ?? [],
            channels == nil ? [] : RedisRecordCodec.message(record),
            RedisKeys.member(record.line, record.orderID),
            terminal ? [UInt8(ascii: "1")] : [UInt8(ascii: "0")],
            RedisRecordCodec.digits(prepared.snapshot.updatedAtMillis),
            expected.snapshot.map { RedisRecordCodec.digits($0.updatedAtMillis) } ?? [],
            Array(String(snapshot.count).utf8),
        ]
        arguments += snapshot
        arguments += RedisRecordCodec.entryFields(record)
        return arguments
    }

    static func key(_ change: OrderChange) -> OrderKey { OrderKey(line: change.line, id: change.orderID) }

    /// A random write token (64 bits in base 36).
    static func newToken() -> String { String(UInt64.random(in: 1...UInt64.max), radix: 36) }
}
