public import LonglinkCore

/// Imports (for `longlink migrate`) and retention (`expire`).
extension SQLiteOrderStore {
    @discardableResult
    public func importOrder(_ snapshot: OrderSnapshot, history: [OrderChangeRecord], policy: ImportPolicy)
        throws(StoreError) -> ImportOutcome
    {
        guard !closed else { throw .closed }
        let imported = try ChangeValidation.prepareImport(snapshot, history: history, catalog: catalog, epoch: epoch)
        let outcome = try transaction { () throws(SQLiteError) in try write(imported, policy: policy) }
        cache.remove(SQLiteOrderCache.Key(line: snapshot.line, id: snapshot.orderID))
        return try outcome.get()
    }

    /// Writes an imported order inside the open transaction unless the stored one is identical or `policy`
    /// refuses it (then nothing is written and the refusal is returned).
    private func write(_ imported: (snapshot: OrderSnapshot, history: [OrderChangeRecord]), policy: ImportPolicy)
        throws(SQLiteError) -> Result<ImportOutcome, StoreError>
    {
        let snapshot = imported.snapshot
        let terminal = ChangeValidation.isTerminal(snapshot, catalog: catalog)
        // The oldest record other than the latest, if any, can age out.
        let agingFrom = imported.history.count > 1 ? imported.history.first?.timestampMillis : nil
        let existing = try loadOrder(snapshot.line, snapshot.orderID)
        var stored: (snapshot: OrderSnapshot, history: [OrderChangeRecord])?
        if let existing {
            let records = try loadRecords(
                key: existing.key,
                line: snapshot.line,
                order: snapshot.orderID,
                from: 0,
                limit: Int.max
            )
            stored = (existing.snapshot, records)
        }
        let outcome: ImportOutcome
        do {
            outcome = try ChangeValidation.importOutcome(stored: stored, imported: imported, policy: policy)
        } catch {
            return .failure(error)
        }
        if outcome == .identical { return .success(.identical) }
        let key: Int64
        if let existing {
            let clear = statements.trimHistory
            try clear.bind(existing.key, at: 1)
            try clear.bind(Int64.max, at: 2)
            try clear.run()
            let update = statements.updateOrderAndAging
            try update.bind(existing.key, at: 1)
            try SQLiteStatements.bind(snapshot, terminal: terminal, to: update)
            try update.bind(agingFrom.map { Int64(bitPattern: $0) }, at: 14)
            try update.run()
            key = existing.key
        } else {
            key = try insertOrder(snapshot, terminal: terminal, agingFrom: agingFrom)
        }
        let insert = statements.insertRecord
        for record in imported.history {
            try insert.bind(key, at: 1)
            try SQLiteStatements.bind(record, to: insert)
            try insert.run()
        }
        return .success(outcome)
    }

    public func expire(nowMillis: UInt64) throws(StoreError) -> Int {
        guard !closed else { throw .closed }
        cache.clear()  // rows change underneath it
        return try transaction { () throws(SQLiteError) -> Int in
            var removed = 0
            // Terminal orders idle for at least the TTL (idle = now - updated_at, as MemoryOrderStore counts).
            if nowMillis >= retention.terminalOrderTTLMillis {
                let cutoff = Int64(clamping: nowMillis - retention.terminalOrderTTLMillis)
                let history = try database.connection.prepare(
                    """
                    DELETE FROM history WHERE order_key IN
                        (SELECT order_key FROM orders WHERE terminal = 1 AND updated_at <= ?)
                    """
                )
                try history.bind(cutoff, at: 1)
                try history.run()
                let orders = try database.connection.prepare(
                    "DELETE FROM orders WHERE terminal = 1 AND updated_at <= ?"
                )
                try orders.bind(cutoff, at: 1)
                try orders.run()
                removed = database.connection.changes
            }
            // Records older than the age limit, except each order's latest: only orders whose `aging_from`
            // is before the cutoff can have any.
            if nowMillis > retention.maxHistoryAgeMillis {
                try expireAgedHistory(before: Int64(clamping: nowMillis - retention.maxHistoryAgeMillis))
            }
            return removed
        }
    }

    /// Deletes records accepted before `cutoff` (except each order's latest) and refreshes `aging_from`.
    private func expireAgedHistory(before cutoff: Int64) throws(SQLiteError) {
        let candidates = try database.connection.prepare(
            "SELECT order_key, last_offset FROM orders WHERE aging_from IS NOT NULL AND aging_from < ?"
        )
        try candidates.bind(cutoff, at: 1)
        var orders: [(key: Int64, last: Int64)] = []
        while try candidates.step() { orders.append((candidates.int64(0), candidates.int64(1))) }
        candidates.reset()
        guard !orders.isEmpty else { return }
        let delete = try database.connection.prepare(
            "DELETE FROM history WHERE order_key = ? AND record_offset < ? AND accepted_at < ?"
        )
        // The new bound: the oldest retained record other than the latest, or NULL when none is left.
        let refresh = try database.connection.prepare(
            """
            UPDATE orders SET aging_from = (SELECT accepted_at FROM history
                WHERE order_key = ?1 AND record_offset < ?2 ORDER BY record_offset LIMIT 1)
            WHERE order_key = ?1
            """
        )
        for order in orders {
            try delete.bind(order.key, at: 1)
            try delete.bind(order.last, at: 2)
            try delete.bind(cutoff, at: 3)
            try delete.run()
            try refresh.bind(order.key, at: 1)
            try refresh.bind(order.last, at: 2)
            try refresh.run()
        }
    }

    /// Runs `body` in one `BEGIN IMMEDIATE … COMMIT`; rolls back when it throws.
    private func transaction<T>(_ body: () throws(SQLiteError) -> T) throws(StoreError) -> T {
        guard !closed else { throw .closed }
        do {
            return try inTransaction(body)
        } catch {
            throw error.storeError(path: path)
        }
    }

    private func inTransaction<T>(_ body: () throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        try statements.begin.run()
        do {
            let result = try body()
            try statements.commit.run()
            return result
        } catch {
            if !database.connection.isAutocommit { try? statements.rollback.run() }
            throw error
        }
    }
}
