public import LonglinkCore

/// Imports (for `longlink migrate`) and retention (`expire`), each order's write in one script.
extension RedisOrderStore {
    @discardableResult
    public func importOrder(_ snapshot: OrderSnapshot, history: [OrderChangeRecord], policy: ImportPolicy)
        throws(StoreError) -> ImportOutcome
    {
        try checkWritable()
        let key = OrderKey(line: snapshot.line, id: snapshot.orderID)
        for _ in 0..<Self.maxAttempts {
            let imported = try ChangeValidation.prepareImport(snapshot, history: history, catalog: catalog, epoch: epoch)
            let replies = try transaction([
                [Array("HGETALL".utf8), keys.order(key.line, key.id)],
                [Array("XRANGE".utf8), keys.history(key.line, key.id), Array("-".utf8), Array("+".utf8)],
            ])
            guard imported.snapshot.position.epoch == epoch else { continue }  // the epoch changed underneath
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
            let reply = try evaluate(RedisScripts.importOrder, keys: scriptKeys(key), arguments: arguments)
            switch reply.array?.first?.string {
            case "OK": return outcome
            case "STALE": continue
            case "EPOCH": try adoptEpoch(try command([Array("GET".utf8), keys.epoch]).string)
            default: throw .storage("Redis at \(address): unexpected import reply \(reply)", retryable: false)
            }
        }
        throw .storage("\(snapshot.route) kept changing during its import; retry", retryable: true)
    }

    /// Removes terminal orders idle for the terminal TTL, then drops records older than the age limit (except
    /// each order's latest). Candidates come from the `terminal` and `aging` sorted sets in pages of 500; each
    /// order is handled by one script that re-checks it, so a change racing with `expire` is never lost.
    public func expire(nowMillis: UInt64) throws(StoreError) -> Int {
        try checkWritable()
        cache.removeAll()
        var removed = 0
        if nowMillis >= retention.terminalOrderTTLMillis {
            let cutoff = nowMillis - retention.terminalOrderTTLMillis
            for member in try candidates(keys.terminal, upTo: cutoff, inclusive: true) {
                guard let (line, id) = RedisKeys.order(fromMember: member) else { continue }
                let reply = try evaluate(
                    RedisScripts.removeTerminal,
                    keys: [
                        keys.order(line, id), keys.history(line, id), keys.keys(line, id), keys.orders, keys.terminal,
                        keys.aging,
                    ],
                    arguments: [member, RedisRecordCodec.digits(cutoff)]
                )
                removed += Int(reply.integer ?? 0)
            }
        }
        if nowMillis > retention.maxHistoryAgeMillis {
            let cutoff = nowMillis - retention.maxHistoryAgeMillis
            for member in try candidates(keys.aging, upTo: cutoff, inclusive: false) {
                guard let (line, id) = RedisKeys.order(fromMember: member) else { continue }
                _ = try evaluate(
                    RedisScripts.ageHistory,
                    keys: [keys.order(line, id), keys.history(line, id), keys.keys(line, id), keys.aging],
                    arguments: [member, RedisRecordCodec.digits(cutoff)]
                )
            }
        }
        return removed
    }

    /// Members of a sorted set scored at or below (or below) `cutoff`, read in pages.
    private func candidates(_ set: [UInt8], upTo cutoff: UInt64, inclusive: Bool) throws(StoreError) -> [[UInt8]] {
        var members: [[UInt8]] = []
        var offset = 0
        let page = 500
        while true {
            let reply = try command([
                Array("ZRANGEBYSCORE".utf8), set, Array("-inf".utf8), Array(((inclusive ? "" : "(") + String(cutoff)).utf8),
                Array("LIMIT".utf8), Array(String(offset).utf8), Array(String(page).utf8),
            ])
            let batch = (reply.array ?? []).compactMap { reply -> [UInt8]? in
                if case .bulk(let bytes) = reply { return bytes }
                return nil
            }
            members += batch
            guard batch.count == page else { return members }
            offset += page
        }
    }
}
