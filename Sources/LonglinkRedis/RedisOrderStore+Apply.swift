public import LonglinkCore

/// Applying changes: Swift-side validation (`ChangeValidation`), then the apply script (see `RedisScripts.apply`),
/// with `WAIT` and publishing after it when `durability` asks for replicas.
extension RedisOrderStore {
    /// How often a change is re-validated after losing the write-token race before giving up (retryable).
    static let maxAttempts = 32

    public func apply(_ change: OrderChange) throws(StoreError) -> AppliedChange {
        try applyOne(change)
    }

    /// Pipelines the batch: orders missing from the cache are read in one transaction (per slot), every change is
    /// validated against the snapshot its predecessors in the batch produce, and all scripts go out in one round
    /// trip (per node). A refusal, a replay, a lost race or a changed epoch is then redone one by one through
    /// `apply`, in batch order, so each change still succeeds or fails on its own. A change whose script may have
    /// run but was not confirmed (lost connection, `WAIT` short of replicas) fails retryably and is not redone.
    public func applyBatch(_ changes: [OrderChange]) -> [Result<AppliedChange, StoreError>] {
        guard !changes.isEmpty else { return [] }
        do {
            try checkWritable()
        } catch {
            return changes.map { _ in .failure(error) }
        }
        if changes.count == 1 { return [Result { () throws(StoreError) in try applyOne(changes[0]) }] }
        walk = nil
        var results = [Result<AppliedChange, StoreError>?](repeating: nil, count: changes.count)
        var redo = Set<Int>()
        // Orders that could not be read (their shard is down) fail; the others' changes go on.
        var unreadable: [OrderKey: StoreError] = [:]
        var seen = Set<OrderKey>()
        let missing = changes.map(Self.key).filter { cache[$0] == nil && seen.insert($0).inserted }
        for (key, loaded) in zip(missing, missing.isEmpty ? [] : loadEach(missing)) {
            if case .failure(let error) = loaded { unreadable[key] = error }
        }
        var working: [OrderKey: CachedOrder] = [:]
        var tainted = Set<OrderKey>()
        var calls: [(index: Int, call: ApplyCall)] = []
        for (index, change) in changes.enumerated() {
            let key = Self.key(change)
            if let error = unreadable[key] {
                results[index] = .failure(error)
                continue
            }
            guard !tainted.contains(key), let current = working[key] ?? cache[key],
                let prepared = try? prepare(change, current.snapshot, key: key)
            else {
                tainted.insert(key)
                redo.insert(index)
                continue
            }
            let token = Self.newToken()
            working[key] = CachedOrder(snapshot: prepared.snapshot, token: token)
            calls.append((index, ApplyCall(key: key, prepared: prepared, expected: current, token: token)))
        }
        var failed = Set<OrderKey>()
        for ((index, call), outcome) in zip(calls, runApplies(calls.map(\.call))) {
            switch outcome {
            case .applied where !failed.contains(call.key):
                remember(CachedOrder(snapshot: call.prepared.snapshot, token: call.token), for: call.key)
                results[index] = .success(AppliedChange(record: call.prepared.record, snapshot: call.prepared.snapshot, deduplicated: false))
            case .failed(let error):
                // It may have been applied: never applied a second time; the publisher retries with its key.
                failed.insert(call.key)
                cache[call.key] = nil
                results[index] = .failure(error)
            default:
                failed.insert(call.key)
                cache[call.key] = nil
                redo.insert(index)
            }
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
        walk = nil
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
                prepared = try prepare(change, current.snapshot, key: key)
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
            let call = ApplyCall(key: key, prepared: prepared, expected: current, token: token)
            switch runApplies([call])[0] {
            case .applied:
                remember(CachedOrder(snapshot: prepared.snapshot, token: token), for: key)
                return AppliedChange(record: prepared.record, snapshot: prepared.snapshot, deduplicated: false)
            case .replayed(let record, let stored):
                remember(CachedOrder(snapshot: stored.snapshot, token: stored.token), for: key)
                try ChangeValidation.checkReplay(change, of: record)
                return AppliedChange(record: record, snapshot: stored.snapshot, deduplicated: true)
            case .stale(let stored):
                current = staleOrder(stored, key: key)
                fresh = true
            case .epochChanged:
                current = try orderAfterEpochChange(key)
                fresh = true
            case .failed(let error):
                cache[key] = nil
                throw error
            }
        }
        throw .storage("\(change.route) changed \(Self.maxAttempts) times while this change was validated; retry", retryable: true)
    }

    /// Records another store committed, one script each (see `ChangeValidation.prepareCommitted`).
    public func applyCommittedBatch(_ records: [OrderChangeRecord]) -> [Result<AppliedChange, StoreError>] {
        records.map { record in Result { () throws(StoreError) in try applyCommittedOne(record) } }
    }

    /// One committed record: checked against the cached (or read) snapshot, appended by the apply script with the
    /// write-token check, or compared with the stored record at its offset. The record takes the epoch of its
    /// order's slot (the store's on a server).
    func applyCommittedOne(_ record: OrderChangeRecord) throws(StoreError) -> AppliedChange {
        try checkWritable()
        walk = nil
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
            let epoch = try knownEpoch(slot: slot(key))
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
                let entry = try transaction(key, [
                    [Array("XRANGE".utf8), keys.history(key.line, key.id), Array("\(offset)-0".utf8), Array("\(offset)-0".utf8)]
                ])[0].array?.first
                let stored = entry.flatMap { RedisRecordCodec.record(entry: $0, line: key.line, order: key.id, epoch: self.epoch(for: key)) }
                return try ChangeValidation.heldRecord(record, stored: stored, current: snapshot)
            case .append(let prepared):
                let token = Self.newToken()
                switch runApplies([ApplyCall(key: key, prepared: prepared, expected: current, token: token)])[0] {
                case .applied:
                    remember(CachedOrder(snapshot: prepared.snapshot, token: token), for: key)
                    return AppliedChange(record: prepared.record, snapshot: prepared.snapshot, deduplicated: false)
                case .replayed(let stored, _):
                    // The record's idempotency key is held by another record of the order.
                    throw .conflict(
                        "\(record.line)/\(record.orderID): the idempotency key of the record at offset "
                            + "\(record.position.offset) is held by the record at offset \(stored.position.offset)"
                    )
                case .stale(let stored):
                    current = staleOrder(stored, key: key)
                    fresh = true
                case .epochChanged:
                    current = try orderAfterEpochChange(key)
                    fresh = true
                case .failed(let error):
                    cache[key] = nil
                    throw error
                }
            }
        }
        throw .storage("\(record.route) changed \(Self.maxAttempts) times while its record was stored; retry", retryable: true)
    }

    /// The order as the script found it when it refused a stale write token (`STALE`), cached.
    private func staleOrder(_ stored: (snapshot: OrderSnapshot, token: String)?, key: OrderKey) -> CachedOrder {
        let order = CachedOrder(snapshot: stored?.snapshot, token: stored?.token ?? "")
        remember(order, for: key)
        return order
    }

    /// The order read again after the script said the slot's epoch changed (Redis lost its data), with the new epoch.
    private func orderAfterEpochChange(_ key: OrderKey) throws(StoreError) -> CachedOrder {
        try refreshEpoch(slot: slot(key))
        return try load(key)
    }

    /// The first record of a replayed idempotency key with the current snapshot, or nil (from the replay script,
    /// so that with `WAIT` the replay is confirmed, and published again, like a new change); `idempotencyConflict`
    /// when the key's record is a different change.
    private func replayed(_ change: OrderChange) throws(StoreError) -> AppliedChange? {
        guard !change.idempotencyKey.isEmpty else { return nil }
        let key = Self.key(change)
        let slot = slot(key)
        let result = runWriteScripts([
            WriteScript(
                slot: slot,
                script: RedisScripts.replay,
                keys: [keys.order(key.line, key.id), keys.history(key.line, key.id), keys.keys(key.line, key.id), keys.epoch(slot)],
                arguments: [Array(String(try knownEpoch(slot: slot)).utf8), Array(change.idempotencyKey.utf8)]
            )
        ])[0]
        let (reply, confirmed) = try result.get()
        let parts = reply.array ?? []
        switch parts.first?.string {
        case "DUP" where parts.count == 3:
            guard confirmed else { throw unconfirmed(change.route) }
            let epoch = epochs[slot]
            guard let record = RedisRecordCodec.record(entry: parts[1], line: key.line, order: key.id, epoch: epoch),
                let stored = RedisRecordCodec.snapshot(RedisRecordCodec.pairs(parts[2]), line: key.line, order: key.id, epoch: epoch)
            else { return nil }
            remember(CachedOrder(snapshot: stored.snapshot, token: stored.token), for: key)
            try ChangeValidation.checkReplay(change, of: record)
            if durability.waits { publishConfirmed([record]) }
            return AppliedChange(record: record, snapshot: stored.snapshot, deduplicated: true)
        case "EPOCH":
            try refreshEpoch(slot: slot)
            return nil
        default:
            return nil
        }
    }

    private func prepare(_ change: OrderChange, _ current: OrderSnapshot?, key: OrderKey) throws(StoreError) -> ChangeValidation.Prepared {
        try ChangeValidation.prepare(change, current: current, catalog: catalog, epoch: epoch(for: key), nowMillis: clock.nowMillis())
    }

    // MARK: Running apply scripts

    /// One prepared apply-script call (the prepared record carries the route and the idempotency key).
    struct ApplyCall {
        var key: OrderKey
        var prepared: ChangeValidation.Prepared
        var expected: CachedOrder
        var token: String
    }

    /// What an apply script (and its `WAIT`) answered.
    enum ApplyOutcome {
        /// Stored (and confirmed by the replicas asked for).
        case applied
        /// The idempotency key was applied before: its record and the current snapshot (confirmed).
        case replayed(OrderChangeRecord, (snapshot: OrderSnapshot, token: String))
        /// Another writer changed the order: what it holds now.
        case stale((snapshot: OrderSnapshot, token: String)?)
        /// The slot's epoch is not the one the change was prepared in.
        case epochChanged
        /// Not run, or run without confirmation: retrying the same change may duplicate it unless it has a key.
        case failed(StoreError)
    }

    /// Runs apply scripts, pipelined (per node), each node's followed by `WAIT` when `durability` asks; with
    /// `WAIT`, confirmed records are then published (the scripts did not).
    func runApplies(_ calls: [ApplyCall]) -> [ApplyOutcome] {
        let scripts = calls.map { call in
            WriteScript(slot: slot(call.key), script: applyScript, keys: scriptKeys(call.key), arguments: applyArguments(call))
        }
        var publish: [OrderChangeRecord] = []
        let outcomes = zip(calls, runWriteScripts(scripts)).map { call, result -> ApplyOutcome in
            let reply: RedisReply
            let confirmed: Bool
            switch result {
            case .failure(let error): return .failed(error)
            case .success(let answer): (reply, confirmed) = answer
            }
            let parts = reply.array ?? []
            let key = call.key
            let epoch = epoch(for: key)
            switch parts.first?.string {
            case "OK":
                guard confirmed else { return .failed(unconfirmed(call.prepared.record.route)) }
                publish.append(call.prepared.record)
                return .applied
            case "DUP" where parts.count == 3:
                guard let stored = RedisRecordCodec.snapshot(RedisRecordCodec.pairs(parts[2]), line: key.line, order: key.id, epoch: epoch),
                    let record = RedisRecordCodec.record(entry: parts[1], line: key.line, order: key.id, epoch: epoch)
                else { return .failed(.storage("\(link.name): unreadable replay of \(call.prepared.record.route)", retryable: false)) }
                guard confirmed else { return .failed(unconfirmed(call.prepared.record.route)) }
                publish.append(record)
                return .replayed(record, stored)
            case "STALE" where parts.count == 2:
                return .stale(RedisRecordCodec.snapshot(RedisRecordCodec.pairs(parts[1]), line: key.line, order: key.id, epoch: epoch))
            case "EPOCH":
                return .epochChanged
            default:
                return .failed(.storage("\(link.name): unexpected apply reply \(reply)", retryable: false))
            }
        }
        if durability.waits { publishConfirmed(publish) }
        return outcomes
    }

    /// A write script for one slot.
    struct WriteScript {
        var slot: Int
        var script: String
        var keys: [[UInt8]]
        var arguments: [[UInt8]]
    }

    /// Runs write scripts pipelined (per node) with `WAIT` after each node's when `durability` asks (and `wait`),
    /// falling back to `EVAL` for scripts a node does not know. Each result is the script's reply (an error reply
    /// becomes a non-retryable failure) and whether the `WAIT` confirmed it (always true without `WAIT`).
    func runWriteScripts(_ scripts: [WriteScript], wait: Bool = true) -> [Result<(RedisReply, confirmed: Bool), StoreError>] {
        let trailer = wait && durability.waits ? [durability.waitCommand] : []
        func groups(_ indices: [Int], source: Bool) -> [RedisStoreLink.Group] {
            indices.map { index in
                let script = scripts[index]
                let command = source
                    ? RedisStoreLink.evalSourceCommand(script.script, keys: script.keys, arguments: script.arguments)
                    : link.evalCommand(script.script, keys: script.keys, arguments: script.arguments)
                return RedisStoreLink.Group(slot: script.slot, commands: [command], replayable: false)
            }
        }
        var results = link.run(groups(Array(scripts.indices), source: false), trailer: trailer)
        let unknown = results.indices.filter { index in
            if case .success(let replies) = results[index], case .error(let message) = replies[0] { return message.hasPrefix("NOSCRIPT") }
            return false
        }
        if !unknown.isEmpty {
            for (index, result) in zip(unknown, link.run(groups(unknown, source: true), trailer: trailer)) { results[index] = result }
        }
        return results.map { result in
            result.flatMap { replies in
                if case .error(let message) = replies[0] { return .failure(.storage("\(link.name): \(message)", retryable: false)) }
                let confirmed = trailer.isEmpty || (replies.last?.integer ?? 0) >= Int64(durability.replicas)
                if !confirmed { lastWaitAnswer = replies.last.map { "\($0)" } ?? "nothing" }
                return .success((replies[0], confirmed))
            }
        }
    }

    /// The retryable failure of a change the replicas did not confirm in time.
    func unconfirmed(_ route: Route) -> StoreError {
        .storage(
            "\(link.name): \(route) was not confirmed by \(durability.replicas) replica(s) within the WAIT timeout "
                + "(WAIT answered \(lastWaitAnswer)); retry with the same idempotency key",
            retryable: true
        )
    }

    /// Publishes records the replicas confirmed (with `WAIT` the scripts publish nothing): `PUBLISH`, or `SPUBLISH`
    /// on the shard of the record's slot. A subscriber seeing one twice (a replay) ignores the older offset.
    func publishConfirmed(_ records: [OrderChangeRecord]) {
        guard let channels, !records.isEmpty else { return }
        let command = Array((keys.clustered ? "SPUBLISH" : "PUBLISH").utf8)
        let groups = records.map { record in
            let route = record.route
            return RedisStoreLink.Group(
                slot: keys.slot(of: route),
                commands: [[command, Array(keys.channel(for: route, scheme: channels).utf8), RedisRecordCodec.message(record)]],
                replayable: true
            )
        }
        for result in link.run(groups) {
            if case .failure = result { unpublishedRecords += 1 }
        }
    }

    /// The apply script of this store's kind (`SPUBLISH` on a cluster).
    var applyScript: String { keys.clustered ? RedisScripts.applySharded : RedisScripts.apply }

    /// The apply script's keys for an order (all in its slot on a cluster).
    func scriptKeys(_ key: OrderKey) -> [[UInt8]] {
        let slot = slot(key)
        return [
            keys.order(key.line, key.id), keys.history(key.line, key.id), keys.keys(key.line, key.id), keys.epoch(slot),
            keys.orders(slot), keys.terminal(slot), keys.aging(slot),
        ]
    }

    private func applyArguments(_ call: ApplyCall) -> [[UInt8]] {
        let record = call.prepared.record
        let snapshot = RedisRecordCodec.snapshotFields(call.prepared.snapshot)
        let terminal = ChangeValidation.isTerminal(call.prepared.snapshot, catalog: catalog)
        // With WAIT the script publishes nothing: the record goes out once the replicas confirmed it.
        let publishing = durability.waits ? nil : channels
        var arguments: [[UInt8]] = [
            Array(String(epoch(for: call.key)).utf8),
            Array(call.expected.token.utf8),
            Array(call.token.utf8),
            Array(record.idempotencyKey.utf8),
            RedisRecordCodec.digits(record.position.offset),
            Array(String(max(1, retention.maxRecordsPerOrder)).utf8),
            publishing.map { Array(keys.channel(for: record.route, scheme: $0).utf8) } ?? [],
            publishing == nil ? [] : RedisRecordCodec.message(record),
            RedisKeys.member(record.line, record.orderID),
            terminal ? [UInt8(ascii: "1")] : [UInt8(ascii: "0")],
            RedisRecordCodec.digits(call.prepared.snapshot.updatedAtMillis),
            call.expected.snapshot.map { RedisRecordCodec.digits($0.updatedAtMillis) } ?? [],
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
