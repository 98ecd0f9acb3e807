public import LonglinkCore

/// Group commit: validation through `ChangeValidation`, one transaction per batch.
///
/// A batch first runs without savepoints (four statements per change instead of six). Should a write fail (a full
/// disk, an I/O error), that transaction is rolled back, nothing of it stored or acknowledged, and the batch runs
/// again with a savepoint per change, so only the change whose write fails is refused.
extension SQLiteOrderStore {
    public func apply(_ change: OrderChange) throws(StoreError) -> AppliedChange {
        guard let result = applyBatch([change]).first else { throw .closed }
        return try result.get()
    }

    public func applyBatch(_ changes: [OrderChange]) -> [Result<AppliedChange, StoreError>] {
        groupCommit(changes) { (change, savepoint) throws(ChangeFailure) in try applyOne(change, savepoint: savepoint) }
    }

    /// Records another store committed, in one transaction like `applyBatch` (see `ChangeValidation.prepareCommitted`).
    public func applyCommittedBatch(_ records: [OrderChangeRecord]) -> [Result<AppliedChange, StoreError>] {
        groupCommit(records) { (record, savepoint) throws(ChangeFailure) in
            try applyCommittedOne(record, savepoint: savepoint)
        }
    }

    /// Runs `one` for each item in one transaction, first without savepoints, then (after a storage failure rolled
    /// that back) with a savepoint per item.
    private func groupCommit<Item>(
        _ items: [Item],
        _ one: (Item, _ savepoint: Bool) throws(ChangeFailure) -> AppliedChange
    ) -> [Result<AppliedChange, StoreError>] {
        guard !items.isEmpty else { return [] }
        guard !closed else { return items.map { _ in .failure(.closed) } }
        if let results = transaction(items, savepoints: false, one) { return results }
        return transaction(items, savepoints: true, one) ?? items.map { _ in .failure(.closed) }
    }

    /// One transaction for `items`. Without `savepoints`, a storage failure rolls the transaction back and
    /// returns nil (nothing stored); with them, it refuses that item only.
    private func transaction<Item>(
        _ items: [Item],
        savepoints: Bool,
        _ one: (Item, _ savepoint: Bool) throws(ChangeFailure) -> AppliedChange
    ) -> [Result<AppliedChange, StoreError>]? {
        do {
            try statements.begin.run()
            try refreshCache()
        } catch {
            if !database.connection.isAutocommit { try? statements.rollback.run() }
            return items.map { _ in .failure(error.storeError(path: path)) }
        }
        var results: [Result<AppliedChange, StoreError>] = []
        results.reserveCapacity(items.count)
        for item in items {
            do {
                results.append(.success(try one(item, savepoints)))
            } catch {
                switch error {
                case .refused(let refusal):
                    results.append(.failure(refusal))
                case .storage where !savepoints:
                    if !database.connection.isAutocommit { try? statements.rollback.run() }
                    cache.rollback()
                    return nil
                case .storage(let failure):
                    // SQLite may roll the whole transaction back by itself after some errors (a full disk, an
                    // I/O error): then the earlier changes of this batch are gone too, and none is stored.
                    if database.connection.isAutocommit {
                        cache.rollback()
                        return items.map { _ in .failure(failure.storeError(path: path)) }
                    }
                    results.append(.failure(failure.storeError(path: path)))
                }
            }
        }
        do {
            try statements.commit.run()
        } catch {
            if !database.connection.isAutocommit { try? statements.rollback.run() }
            cache.rollback()
            let what = items.count == 1 ? "the change was" : "the batch of \(items.count) changes was"
            let failure = StoreError.storage(
                "\(what) not committed, nothing of it is stored: " + error.explanation(path: path),
                retryable: error.isRetryable
            )
            return items.map { _ in .failure(failure) }
        }
        cache.commit()
        return results
    }

    /// Drops the cache when another connection committed since we last looked (inside the transaction, so
    /// nobody else can write until we commit).
    private func refreshCache() throws(SQLiteError) {
        let query = statements.dataVersion
        defer { query.reset() }
        guard try query.step() else { return }
        let version = query.int64(0)
        if version != cache.dataVersion {
            cache.clear()
            cache.dataVersion = version
        }
    }

    /// Why one change of a batch failed: refused by validation, or a storage error.
    enum ChangeFailure: Error {
        case refused(StoreError)
        case storage(SQLiteError)
    }

    /// Validates and writes one change inside the open transaction. With `savepoint`, a storage failure during
    /// the writes is rolled back to the change's savepoint, so the rest of the batch is untouched.
    private func applyOne(_ change: OrderChange, savepoint: Bool) throws(ChangeFailure) -> AppliedChange {
        let cacheKey = SQLiteOrderCache.Key(line: change.line, id: change.orderID)
        var current = cache.order(cacheKey)
        var replayed: OrderChangeRecord?
        do {
            if current == nil { current = try loadOrder(change.line, change.orderID) }
            if let current, !change.idempotencyKey.isEmpty,
                let first = try recordWithKey(change.idempotencyKey, of: current.key, current.snapshot)
            {
                replayed = first
            }
        } catch {
            throw .storage(error)
        }
        if let replayed, let current {
            do {
                try ChangeValidation.checkReplay(change, of: replayed)
            } catch {
                throw .refused(error)
            }
            return AppliedChange(record: replayed, snapshot: current.snapshot, deduplicated: true)
        }
        let prepared: ChangeValidation.Prepared
        do {
            prepared = try ChangeValidation.prepare(
                change,
                current: current?.snapshot,
                catalog: catalog,
                epoch: epoch,
                nowMillis: clock.nowMillis()
            )
        } catch {
            throw .refused(error)
        }
        return try store(prepared, over: current, key: cacheKey, savepoint: savepoint)
    }

    /// Checks and writes one committed record inside the open transaction (see `applyOne`).
    private func applyCommittedOne(_ record: OrderChangeRecord, savepoint: Bool) throws(ChangeFailure) -> AppliedChange {
        let cacheKey = SQLiteOrderCache.Key(line: record.line, id: record.orderID)
        var current = cache.order(cacheKey)
        do {
            if current == nil { current = try loadOrder(record.line, record.orderID) }
        } catch {
            throw .storage(error)
        }
        let step: ChangeValidation.CommittedStep
        do {
            step = try ChangeValidation.prepareCommitted(record, current: current?.snapshot, catalog: catalog, epoch: epoch)
        } catch {
            throw .refused(error)
        }
        switch step {
        case .append(let prepared):
            return try store(prepared, over: current, key: cacheKey, savepoint: savepoint)
        case .compare(let offset):
            guard let current else { throw .refused(.conflict("\(record.route) is not stored here")) }
            let stored: OrderChangeRecord?
            do {
                stored = try loadRecords(key: current.key, line: record.line, order: record.orderID, from: offset, limit: 1)
                    .first
            } catch {
                throw .storage(error)
            }
            do {
                return try ChangeValidation.heldRecord(record, stored: stored, current: current.snapshot)
            } catch {
                throw .refused(error)
            }
        }
    }

    /// Writes a prepared record and snapshot, with a savepoint around it when asked, and caches the order.
    private func store(
        _ prepared: ChangeValidation.Prepared,
        over current: StoredOrder?,
        key cacheKey: SQLiteOrderCache.Key,
        savepoint: Bool
    ) throws(ChangeFailure) -> AppliedChange {
        guard savepoint else {
            do {
                cache.store(try write(prepared, over: current), for: cacheKey)
            } catch {
                throw .storage(error)
            }
            return AppliedChange(record: prepared.record, snapshot: prepared.snapshot, deduplicated: false)
        }
        do {
            try statements.savepoint.run()
        } catch {
            throw .storage(error)
        }
        do {
            let stored = try write(prepared, over: current)
            try statements.release.run()
            cache.store(stored, for: cacheKey)
        } catch {
            if !database.connection.isAutocommit {
                try? statements.rollbackToSavepoint.run()
                try? statements.release.run()
            }
            throw .storage(error)
        }
        return AppliedChange(record: prepared.record, snapshot: prepared.snapshot, deduplicated: false)
    }

    /// Writes the snapshot and the record, then trims the order's history to `maxRecordsPerOrder`.
    private func write(_ prepared: ChangeValidation.Prepared, over current: StoredOrder?)
        throws(SQLiteError) -> StoredOrder
    {
        let snapshot = prepared.snapshot
        let terminal = ChangeValidation.isTerminal(snapshot, catalog: catalog)
        let stored: StoredOrder
        if let current {
            // The previous latest record becomes agable now; `aging_from` only needs setting when it was nil
            // (the statement without it leaves the aging index untouched).
            let agingFrom = current.agingFrom ?? current.snapshot.updatedAtMillis
            let update = current.agingFrom == nil ? statements.updateOrderAndAging : statements.updateOrder
            try update.bind(current.key, at: 1)
            try SQLiteStatements.bind(snapshot, terminal: terminal, to: update)
            if current.agingFrom == nil { try update.bind(agingFrom, at: 14) }
            try update.run()
            stored = StoredOrder(key: current.key, snapshot: snapshot, agingFrom: agingFrom)
        } else {
            let key = try insertOrder(snapshot, terminal: terminal, agingFrom: nil)
            stored = StoredOrder(key: key, snapshot: snapshot, agingFrom: nil)
        }
        let insert = statements.insertRecord
        try insert.bind(stored.key, at: 1)
        try SQLiteStatements.bind(prepared.record, to: insert)
        try insert.run()
        let keep = UInt64(max(1, retention.maxRecordsPerOrder))
        let offset = prepared.record.position.offset
        if offset > keep {
            // `aging_from` stays a valid lower bound: trimming only removes older records.
            let trim = statements.trimHistory
            try trim.bind(stored.key, at: 1)
            try trim.bind(offset - keep, at: 2)
            try trim.run()
        }
        return stored
    }

    /// Inserts a new order's snapshot; returns its order_key.
    func insertOrder(_ snapshot: OrderSnapshot, terminal: Bool, agingFrom: UInt64?) throws(SQLiteError) -> Int64 {
        let insert = statements.insertOrder
        defer { insert.reset() }
        try insert.bind(snapshot.line.name, at: 1)
        try SQLiteStatements.bind(snapshot, terminal: terminal, to: insert)
        try insert.bind(agingFrom.map { Int64(bitPattern: $0) }, at: 14)
        guard try insert.step() else { throw SQLiteError.invalidRow("INSERT … RETURNING gave no order_key") }
        let key = insert.int64(0)
        // Step to completion so the statement releases its hold on the table before the next one runs.
        _ = try insert.step()
        return key
    }

    /// The retained record of the order carrying idempotency key `key`, or nil.
    private func recordWithKey(_ key: String, of orderKey: Int64, _ snapshot: OrderSnapshot)
        throws(SQLiteError) -> OrderChangeRecord?
    {
        let query = statements.selectRecordByKey
        defer { query.reset() }
        try query.bind(orderKey, at: 1)
        try query.bind(key, at: 2)
        guard try query.step() else { return nil }
        return SQLiteStatements.record(from: query, line: snapshot.line, orderID: snapshot.orderID, epoch: epoch)
    }
}
