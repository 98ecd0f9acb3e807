public import LonglinkCore

/// Feature toggles in the `toggles` table (schema v2). Toggles change rarely, so statements are prepared per call.
extension SQLiteOrderStore {
    public func setToggle(app: String, name: String, value: ToggleValue, nowMillis: UInt64) throws(StoreError) -> FeatureToggle {
        guard var toggle = FeatureToggle(app: app, name: name, value: value) else {
            throw .invalidField("toggle '\(app)/\(name)': app must be [a-z0-9_-] (32) and name [A-Za-z0-9_.-] (64)")
        }
        let (kind, text) = Self.columns(value)
        let epoch = self.epoch
        let offset = try storage { () throws(SQLiteError) -> UInt64 in
            let query = try database.connection.prepare(
                """
                INSERT INTO toggles (app, name, value_kind, value_text, epoch, last_offset, updated_at)
                VALUES (?1, ?2, ?3, ?4, ?5, 1, ?6)
                ON CONFLICT (app, name) DO UPDATE SET
                    value_kind = excluded.value_kind, value_text = excluded.value_text,
                    last_offset = CASE WHEN epoch = excluded.epoch THEN last_offset + 1 ELSE 1 END,
                    epoch = excluded.epoch, updated_at = excluded.updated_at
                RETURNING last_offset
                """
            )
            defer { query.reset() }
            try query.bind(app, at: 1)
            try query.bind(name, at: 2)
            try query.bind(kind, at: 3)
            try query.bind(text, at: 4)
            try query.bind(Int64(epoch), at: 5)
            try query.bind(nowMillis, at: 6)
            guard try query.step() else { throw SQLiteError.invalidRow("toggle upsert returned no row") }
            return query.uint64(0)
        }
        toggle.position = StreamPosition(epoch: epoch, offset: offset)
        toggle.updatedAtMillis = nowMillis
        return toggle
    }

    public var keepsToggles: Bool { true }

    /// Writes the toggle as given (position in this store's epoch) in one transaction with the check of what is
    /// stored.
    @discardableResult
    public func importToggle(_ toggle: FeatureToggle, policy: ImportPolicy) throws(StoreError) -> ImportOutcome {
        guard toggle.position.offset >= 1 else { throw .invalidField("toggle \(toggle.app)/\(toggle.name): offset 0") }
        var imported = toggle
        imported.position.epoch = epoch
        let (kind, text) = Self.columns(toggle.value)
        let decided = try storage { () throws(SQLiteError) -> Result<ImportOutcome, StoreError> in
            try statements.begin.run()
            do throws(SQLiteError) {
                let stored = try readToggles(app: toggle.app).first { $0.name == toggle.name }
                let decision = Result { () throws(StoreError) in
                    try ChangeValidation.importOutcome(stored: stored, imported: imported, policy: policy)
                }
                guard case .success(let outcome) = decision else {
                    try statements.rollback.run()
                    return decision
                }
                if outcome != .identical {
                    let upsert = try database.connection.prepare(
                        """
                        INSERT INTO toggles (app, name, value_kind, value_text, epoch, last_offset, updated_at)
                        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                        ON CONFLICT (app, name) DO UPDATE SET
                            value_kind = excluded.value_kind, value_text = excluded.value_text,
                            epoch = excluded.epoch, last_offset = excluded.last_offset, updated_at = excluded.updated_at
                        """
                    )
                    try upsert.bind(toggle.app, at: 1)
                    try upsert.bind(toggle.name, at: 2)
                    try upsert.bind(kind, at: 3)
                    try upsert.bind(text, at: 4)
                    try upsert.bind(Int64(epoch), at: 5)
                    try upsert.bind(toggle.position.offset, at: 6)
                    try upsert.bind(toggle.updatedAtMillis, at: 7)
                    try upsert.run()
                }
                try statements.commit.run()
                return .success(outcome)
            } catch {
                if !database.connection.isAutocommit { try? statements.rollback.run() }
                throw error
            }
        }
        return try decided.get()
    }

    public func toggles(app: String?) throws(StoreError) -> [FeatureToggle] {
        try storage { () throws(SQLiteError) -> [FeatureToggle] in try readToggles(app: app) }
    }

    /// The stored toggles of `app` (all when nil); none in a read-only v1 file, which has no `toggles` table.
    private func readToggles(app: String?) throws(SQLiteError) -> [FeatureToggle] {
        if database.isReadOnly && database.schemaVersion < SQLiteSchema.version2.version { return [] }
        let query = try database.connection.prepare(
            """
            SELECT app, name, value_kind, value_text, epoch, last_offset, updated_at FROM toggles
            WHERE ?1 IS NULL OR app = ?1 ORDER BY app, name
            """
        )
        defer { query.reset() }
        try query.bind(app, at: 1)
        var toggles: [FeatureToggle] = []
        while try query.step() {
            guard let value = Self.value(kind: query.text(2), text: query.text(3)),
                let toggle = FeatureToggle(
                    app: query.text(0),
                    name: query.text(1),
                    value: value,
                    position: StreamPosition(epoch: UInt32(truncatingIfNeeded: query.int64(4)), offset: query.uint64(5)),
                    updatedAtMillis: query.uint64(6)
                )
            else { throw SQLiteError.invalidRow("toggle row \(query.text(0))/\(query.text(1)) is unreadable") }
            toggles.append(toggle)
        }
        return toggles
    }

    static func columns(_ value: ToggleValue) -> (String, String) {
        switch value {
        case .bool(let on): ("bool", on ? "true" : "false")
        case .rollout(let percent): ("rollout", String(percent))
        case .string(let text): ("string", text)
        }
    }

    static func value(kind: String, text: String) -> ToggleValue? {
        switch kind {
        case "bool": .bool(text == "true")
        case "rollout": Int(text).map { .rollout(percent: $0) }
        case "string": .string(text)
        default: nil
        }
    }
}
