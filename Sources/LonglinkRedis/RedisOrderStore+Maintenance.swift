public import LonglinkCore

/// Imports (for `longlink migrate`) and retention (`expire`), each order's write in one script.
extension RedisOrderStore {
    @discardableResult
    public func importOrder(_ snapshot: OrderSnapshot, history: [OrderChangeRecord], policy: ImportPolicy)
        throws(StoreError) -> ImportOutcome
    {
        try checkWritable()
        walk = nil
        let key = OrderKey(line: snapshot.line, id: snapshot.orderID)
        let slot = slot(key)
        for _ in 0..<Self.maxAttempts {
            let epoch = try knownEpoch(slot: slot)
            let imported = try ChangeValidation.prepareImport(snapshot, history: history, catalog: catalog, epoch: epoch)
            let replies = try transaction(key, [
                [Array("HGETALL".utf8), keys.order(key.line, key.id)],
                [Array("XRANGE".utf8), keys.history(key.line, key.id), Array("-".utf8), Array("+".utf8)],
            ])
            guard imported.snapshot.position.epoch == epochs[slot] else { continue }  // the epoch changed underneath
            let stored = RedisRecordCodec.snapshot(RedisRecordCodec.pairs(replies[0]), line: key.line, order: key.id, epoch: epoch)
            let storedHistory = (replies[1].array ?? []).compactMap {
                RedisRecordCodec.record(entry: $0, line: key.line, order: key.id, epoch: epoch)
            }
            let outcome = try ChangeValidation.importOutcome(
                stored: stored.map { ($0.snapshot, storedHistory) },
                imported: imported,
                policy: policy
            )
            if outcome == .identical { return .identical }
            cache[key] = nil
            let token = Self.newToken()
            let fields = RedisRecordCodec.snapshotFields(imported.snapshot)
            let agingFrom = imported.history.count > 1 ? imported.history.first.map { RedisRecordCodec.digits($0.timestampMillis) } : nil
            var arguments: [[UInt8]] = [
                Array(String(epoch).utf8),
                Array((stored?.token ?? "").utf8),
                Array(token.utf8),
                RedisKeys.member(key.line, key.id),
                ChangeValidation.isTerminal(imported.snapshot, catalog: catalog) ? [UInt8(ascii: "1")] : [UInt8(ascii: "0")],
                RedisRecordCodec.digits(imported.snapshot.updatedAtMillis),
                agingFrom ?? [],
                Array(String(fields.count).utf8),
            ]
            arguments += fields
            for record in imported.history {
                let entry = RedisRecordCodec.entryFields(record)
                arguments.append(RedisRecordCodec.digits(record.position.offset))
                arguments.append(Array(String(entry.count).utf8))
                arguments += entry
            }
            let (reply, confirmed) = try runWriteScripts([
                WriteScript(slot: slot, script: RedisScripts.importOrder, keys: scriptKeys(key), arguments: arguments)
            ])[0].get()
            switch reply.array?.first?.string {
            case "OK":
                guard confirmed else { throw unconfirmed(snapshot.route) }
                return outcome
            case "STALE": continue
            case "EPOCH": try refreshEpoch(slot: slot)
            default: throw .storage("\(link.name): unexpected import reply \(reply)", retryable: false)
            }
        }
        throw .storage("\(snapshot.route) kept changing during its import; retry", retryable: true)
    }

    /// Removes terminal orders idle for the terminal TTL, then drops records older than the age limit (except
    /// each order's latest). Candidates come from the `terminal` and `aging` sorted sets (one pair per slot on a
    /// cluster, read in one pipeline per node) in pages of 500; each order is handled by one script that
    /// re-checks it, so a change racing with `expire` is never lost.
    public func expire(nowMillis: UInt64) throws(StoreError) -> Int {
        try checkWritable()
        cache.removeAll()
        walk = nil
        var removed = 0
        if nowMillis >= retention.terminalOrderTTLMillis {
            let cutoff = nowMillis - retention.terminalOrderTTLMillis
            let scripts = try candidates(keys.terminal, upTo: cutoff, inclusive: true).compactMap { slot, member -> WriteScript? in
                guard let (line, id) = RedisKeys.order(fromMember: member) else { return nil }
                return WriteScript(
                    slot: slot,
                    script: RedisScripts.removeTerminal,
                    keys: [keys.order(line, id), keys.history(line, id), keys.keys(line, id), keys.orders(slot), keys.terminal(slot), keys.aging(slot)],
                    arguments: [member, RedisRecordCodec.digits(cutoff)]
                )
            }
            for result in runWriteScripts(scripts, wait: false) { removed += Int(try result.get().0.integer ?? 0) }
        }
        if nowMillis > retention.maxHistoryAgeMillis {
            let cutoff = nowMillis - retention.maxHistoryAgeMillis
            let scripts = try candidates(keys.aging, upTo: cutoff, inclusive: false).compactMap { slot, member -> WriteScript? in
                guard let (line, id) = RedisKeys.order(fromMember: member) else { return nil }
                return WriteScript(
                    slot: slot,
                    script: RedisScripts.ageHistory,
                    keys: [keys.order(line, id), keys.history(line, id), keys.keys(line, id), keys.aging(slot)],
                    arguments: [member, RedisRecordCodec.digits(cutoff)]
                )
            }
            for result in runWriteScripts(scripts, wait: false) { _ = try result.get() }
        }
        return removed
    }

    /// Members of each slot's sorted set scored at or below (or below) `cutoff`, read in pages of 500 per slot.
    private func candidates(_ set: (Int) -> [UInt8], upTo cutoff: UInt64, inclusive: Bool) throws(StoreError) -> [(slot: Int, member: [UInt8])] {
        var members: [(slot: Int, member: [UInt8])] = []
        var pending = Array(0..<keys.slotCount)
        var offset = 0
        let page = 500
        let maximum = Array(((inclusive ? "" : "(") + String(cutoff)).utf8)
        while !pending.isEmpty {
            let groups = pending.map { slot in
                RedisStoreLink.Group(
                    slot: slot,
                    commands: [[
                        Array("ZRANGEBYSCORE".utf8), set(slot), Array("-inf".utf8), maximum, Array("LIMIT".utf8),
                        Array(String(offset).utf8), Array(String(page).utf8),
                    ]],
                    replayable: true
                )
            }
            var full: [Int] = []
            for (slot, result) in zip(pending, link.run(groups)) {
                let reply = try result.get()[0]
                if case .error(let message) = reply { throw .storage("\(link.name): \(message)", retryable: false) }
                let batch = (reply.array ?? []).compactMap { reply -> [UInt8]? in
                    if case .bulk(let bytes) = reply { return bytes }
                    return nil
                }
                members += batch.map { (slot, $0) }
                if batch.count == page { full.append(slot) }
            }
            pending = full
            offset += page
        }
        return members
    }
}
