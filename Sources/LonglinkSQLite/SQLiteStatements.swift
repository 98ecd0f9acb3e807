import LonglinkCore

/// An order as stored: its row key, snapshot and `aging_from` (see `SQLiteSchema.version1`).
struct StoredOrder {
    /// The compact key history rows refer to.
    var key: Int64
    /// The snapshot.
    var snapshot: OrderSnapshot
    /// A lower bound of the oldest timestamp among records other than the latest; nil when there are none.
    var agingFrom: UInt64?
}

/// Every statement the store runs more than once, prepared when the store opens and reused, plus the mapping
/// between rows and domain values. Column lists are spelled once here so binds and reads cannot drift apart.
final class SQLiteStatements {
    /// Snapshot columns, in the order `snapshot(from:)` reads them.
    static let orderColumns = """
        order_key, line, order_id, state, last_offset, created_at, updated_at, \
        driver_id, eta_seconds, latitude_e6, longitude_e6, cancellation_reason, payload, aging_from
        """
    /// Record columns (without the order), in the order `record(from:line:orderID:epoch:)` reads them.
    static let recordColumns = """
        record_offset, accepted_at, from_state, to_state, \
        driver_id, eta_seconds, latitude_e6, longitude_e6, cancellation_reason, payload, idempotency_key
        """

    let begin, commit, rollback, savepoint, release, rollbackToSavepoint: SQLiteStatement
    /// `PRAGMA data_version`: changes when another connection commits.
    let dataVersion: SQLiteStatement
    /// (line, order_id) → snapshot columns.
    let selectOrder: SQLiteStatement
    /// (line, order_id) → order_key, last_offset, first retained offset.
    let selectBounds: SQLiteStatement
    /// Inserts a snapshot; returns its order_key.
    let insertOrder: SQLiteStatement
    /// Updates a snapshot by order_key, leaving `aging_from` as it is.
    let updateOrder: SQLiteStatement
    /// Updates a snapshot and its `aging_from` (parameter 14) by order_key.
    let updateOrderAndAging: SQLiteStatement
    /// Appends a record.
    let insertRecord: SQLiteStatement
    /// (order_key, idempotency_key) → the record with that key.
    let selectRecordByKey: SQLiteStatement
    /// (order_key, from offset, limit) → records.
    let selectRecords: SQLiteStatement
    /// (order_key, up to offset) → deletes older records.
    let trimHistory: SQLiteStatement
    /// (limit) → first page of orders; (line, order_id, limit) → next page.
    let selectFirstOrders, selectOrdersAfter: SQLiteStatement

    init(_ connection: SQLiteConnection) throws(SQLiteError) {
        begin = try connection.prepare("BEGIN IMMEDIATE")
        commit = try connection.prepare("COMMIT")
        rollback = try connection.prepare("ROLLBACK")
        savepoint = try connection.prepare("SAVEPOINT change")
        release = try connection.prepare("RELEASE change")
        rollbackToSavepoint = try connection.prepare("ROLLBACK TO change")
        dataVersion = try connection.prepare("PRAGMA data_version")
        selectOrder = try connection.prepare(
            "SELECT \(Self.orderColumns) FROM orders WHERE line = ? AND order_id = ?"
        )
        selectBounds = try connection.prepare(
            """
            SELECT order_key, last_offset,
                (SELECT MIN(record_offset) FROM history h WHERE h.order_key = o.order_key)
            FROM orders o WHERE line = ? AND order_id = ?
            """
        )
        insertOrder = try connection.prepare(
            """
            INSERT INTO orders (line, order_id, state, terminal, last_offset, created_at, updated_at,
                driver_id, eta_seconds, latitude_e6, longitude_e6, cancellation_reason, payload, aging_from)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)
            RETURNING order_key
            """
        )
        // Parameters 2 (order_id) and 6 (created_at) are bound but unused (allowed: ?13 is the highest).
        updateOrder = try connection.prepare(
            """
            UPDATE orders SET state = ?3, terminal = ?4, last_offset = ?5, updated_at = ?7,
                driver_id = ?8, eta_seconds = ?9, latitude_e6 = ?10, longitude_e6 = ?11,
                cancellation_reason = ?12, payload = ?13
            WHERE order_key = ?1
            """
        )
        updateOrderAndAging = try connection.prepare(
            """
            UPDATE orders SET state = ?3, terminal = ?4, last_offset = ?5, created_at = ?6, updated_at = ?7,
                driver_id = ?8, eta_seconds = ?9, latitude_e6 = ?10, longitude_e6 = ?11,
                cancellation_reason = ?12, payload = ?13, aging_from = ?14
            WHERE order_key = ?1
            """
        )
        insertRecord = try connection.prepare(
            """
            INSERT INTO history (order_key, \(Self.recordColumns))
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
            """
        )
        selectRecordByKey = try connection.prepare(
            """
            SELECT \(Self.recordColumns) FROM history
            WHERE order_key = ? AND idempotency_key = ?2 AND idempotency_key <> ''
            ORDER BY record_offset DESC LIMIT 1
            """
        )
        selectRecords = try connection.prepare(
            """
            SELECT \(Self.recordColumns) FROM history
            WHERE order_key = ? AND record_offset >= ? ORDER BY record_offset LIMIT ?
            """
        )
        trimHistory = try connection.prepare("DELETE FROM history WHERE order_key = ? AND record_offset <= ?")
        selectFirstOrders = try connection.prepare(
            "SELECT \(Self.orderColumns) FROM orders ORDER BY line, order_id LIMIT ?"
        )
        selectOrdersAfter = try connection.prepare(
            """
            SELECT \(Self.orderColumns) FROM orders WHERE (line, order_id) > (?, ?)
            ORDER BY line, order_id LIMIT ?
            """
        )
    }

    // MARK: Rows ↔ values

    /// Binds a snapshot to `insertOrder`/`updateOrder` (parameters 2–13; 1 is line or order_key).
    static func bind(_ snapshot: OrderSnapshot, terminal: Bool, to statement: SQLiteStatement) throws(SQLiteError) {
        try statement.bind(snapshot.orderID.rawValue, at: 2)
        try statement.bind(snapshot.state.name, at: 3)
        try statement.bind(Int64(terminal ? 1 : 0), at: 4)
        try statement.bind(snapshot.position.offset, at: 5)
        try statement.bind(snapshot.createdAtMillis, at: 6)
        try statement.bind(snapshot.updatedAtMillis, at: 7)
        try bind(snapshot.fields, from: 8, to: statement)
    }

    /// Binds a record to `insertRecord` (parameter 1, the order_key, is bound by the caller).
    static func bind(_ record: OrderChangeRecord, to statement: SQLiteStatement) throws(SQLiteError) {
        try statement.bind(record.position.offset, at: 2)
        try statement.bind(record.timestampMillis, at: 3)
        try statement.bind(record.fromState?.name, at: 4)
        try statement.bind(record.toState.name, at: 5)
        try bind(record.fields, from: 6, to: statement)
        try statement.bind(record.idempotencyKey, at: 12)
    }

    /// Binds the six field columns starting at parameter `first`.
    private static func bind(_ fields: OrderFields, from first: Int32, to statement: SQLiteStatement)
        throws(SQLiteError)
    {
        try statement.bind(fields.driverID, at: first)
        try statement.bind(fields.etaSeconds.map { Int64($0) }, at: first + 1)
        try statement.bind(fields.location.map { Int64($0.latitudeE6) }, at: first + 2)
        try statement.bind(fields.location.map { Int64($0.longitudeE6) }, at: first + 3)
        try statement.bind(fields.cancellationReason, at: first + 4)
        try statement.bind(blob: fields.payload, at: first + 5)
    }

    /// Reads the six field columns starting at column `first`.
    private static func fields(from statement: SQLiteStatement, at first: Int32) -> OrderFields {
        var location: GeoPoint?
        if let latitude = statement.optionalInt64(first + 2), let longitude = statement.optionalInt64(first + 3) {
            location = GeoPoint(
                latitudeE6: Int32(truncatingIfNeeded: latitude),
                longitudeE6: Int32(truncatingIfNeeded: longitude)
            )
        }
        return OrderFields(
            driverID: statement.optionalText(first),
            etaSeconds: statement.optionalInt64(first + 1).map { UInt32(truncatingIfNeeded: $0) },
            location: location,
            cancellationReason: statement.optionalText(first + 4),
            payload: statement.blob(first + 5)
        )
    }

    /// Reads a row of `orderColumns` (nil when line or id is not valid).
    static func order(from statement: SQLiteStatement, epoch: UInt32) -> StoredOrder? {
        guard let line = BusinessLine(statement.text(1)), let orderID = OrderID(statement.text(2)) else { return nil }
        let snapshot = OrderSnapshot(
            orderID: orderID,
            line: line,
            state: OrderState(statement.text(3)),
            fields: fields(from: statement, at: 7),
            position: StreamPosition(epoch: epoch, offset: statement.uint64(4)),
            createdAtMillis: statement.uint64(5),
            updatedAtMillis: statement.uint64(6)
        )
        return StoredOrder(
            key: statement.int64(0),
            snapshot: snapshot,
            agingFrom: statement.optionalInt64(13).map { UInt64(bitPattern: $0) }
        )
    }

    /// Reads a row of `recordColumns` as a record of the given order.
    static func record(
        from statement: SQLiteStatement,
        line: BusinessLine,
        orderID: OrderID,
        epoch: UInt32
    ) -> OrderChangeRecord {
        OrderChangeRecord(
            orderID: orderID,
            line: line,
            fromState: statement.optionalText(2).map { OrderState($0) },
            toState: OrderState(statement.text(3)),
            fields: fields(from: statement, at: 4),
            position: StreamPosition(epoch: epoch, offset: statement.uint64(0)),
            timestampMillis: statement.uint64(1),
            idempotencyKey: statement.text(10)
        )
    }
}
