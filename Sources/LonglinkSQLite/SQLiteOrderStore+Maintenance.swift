public import LonglinkCore

/// Imports (for `longlink migrate`) and retention (`expire`).
extension SQLiteOrderStore {
    public func importOrder(_ snapshot: OrderSnapshot, history: [OrderChangeRecord], replace: Bool)
        throws(StoreError)
    {
        guard !closed else { throw .closed }
        let imported = try ChangeValidation.prepareImport(snapshot, history: history, catalog: catalog, epoch: epoch)
        let outcome = try transaction { () throws(SQLiteError) in try write(imported, replace: replace) }
        if outcome == .conflict {
            throw .conflict("\(snapshot.line)/\(snapshot.orderID) exists with different data")
        }
    }

    /// What an import did.
    private enum ImportOutcome {
        /// The order was written (created or replaced).
        case written
        /// The same order was already stored; nothing was written.
        case identical
        /// A different order is stored and `replace` is false; nothing was written.
        case conflict
    }

    /// Writes an imported order inside the open transaction, unless an identical or conflicting one exists.
    private func write(_ imported: (snapshot: OrderSnapshot, history: [OrderChangeRecord]), replace: Bool)
        throws(SQLiteError) -> ImportOutcome
    {
        let snapshot = imported.snapshot
        let terminal = ChangeValidation.isTerminal(snapshot, catalog: catalog)
        let key: Int64
        if let existing = try loadOrder(snapshot.line, snapshot.orderID) {
            let stored = try loadRecords(
                key: existing.key,
                line: snapshot.line,
                order: snapshot.orderID,
                from: 0,
                limit: Int.max
            )
            if ChangeValidation.isSameOrder((existing.snapshot, stored), imported) { return .identical }
            guard replace else { return .conflict }
            let clear = statements.trimHistory
            try clear.bind(existing.key, at: 1)
            try clear.bind(Int64.max, at: 2)
            try clear.run()
            let update = statements.updateOrder
            try update.bind(existing.key, at: 1)
            try SQLiteStatements.bind(snapshot, terminal: terminal, to: update)
            try update.run()
            key = existing.key
        } else {
            key = try insertOrder(snapshot, terminal: terminal)
        }
        let insert = statements.insertRecord
        for record in imported.history {
            try insert.bind(key, at: 1)
            try SQLiteStatements.bind(record, to: insert)
            try insert.run()
        }
        return .written
    }

    public func expire(nowMillis: UInt64) throws(StoreError) -> Int {
        guard !closed else { throw .closed }
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
            // Records older than the age limit, except each order's latest.
            if nowMillis > retention.maxHistoryAgeMillis {
                let cutoff = Int64(clamping: nowMillis - retention.maxHistoryAgeMillis)
                let aged = try database.connection.prepare(
                    """
                    DELETE FROM history WHERE accepted_at < ? AND record_offset <
                        (SELECT last_offset FROM orders o WHERE o.order_key = history.order_key)
                    """
                )
                try aged.bind(cutoff, at: 1)
                try aged.run()
            }
            return removed
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
