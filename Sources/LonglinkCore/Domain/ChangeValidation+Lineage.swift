/// How two copies of one order (or of one toggle) held by two stores relate, and what an import does about it:
/// shared by every store's `importOrder`/`importToggle`, by `StoreMigration` and its `--verify`.
extension ChangeValidation {
    /// How a copy relates to another copy of the same order or toggle (ignoring epochs).
    public enum Lineage: Hashable, Sendable {
        /// Same data.
        case identical
        /// The copy is an earlier state of the other: the other continues its history (bringing the copy up to
        /// date loses nothing).
        case behind
        /// The copy continues the other's history.
        case ahead
        /// Neither continues the other; what differs first.
        case diverged(String)
    }

    /// How `copy` relates to `other`.
    ///
    /// `copy` is `.behind` when `other` continues it: it was created at the same time, every record of it that
    /// `other` still retains is the same record (records `other` already trimmed cannot be compared; an order
    /// whose whole retained history `other` has dropped counts as behind when its creation time matches), and
    /// either `other` has more records, or both end at the same snapshot and only the retained windows differ
    /// (`other` trimmed old records by retention, or retains older ones). `.ahead` is the same the other way.
    public static func lineage(
        of copy: (snapshot: OrderSnapshot, history: [OrderChangeRecord]),
        comparedWith other: (snapshot: OrderSnapshot, history: [OrderChangeRecord])
    ) -> Lineage {
        guard let first = firstDifference(copy, other) else { return .identical }
        let mine = copy.snapshot.position.offset
        let theirs = other.snapshot.position.offset
        let sameEnd = mine == theirs && difference(copy.snapshot, other.snapshot) == nil
        if (mine < theirs || sameEnd) && isEarlierState(copy, of: other) { return .behind }
        if theirs < mine && isEarlierState(other, of: copy) { return .ahead }
        return .diverged(firstDivergence(copy, other) ?? first)
    }

    /// How a stored toggle relates to another copy of it: offsets count its changes, so the copy with the lower
    /// offset is the earlier one; equal offsets with another value or time have diverged.
    public static func lineage(of copy: FeatureToggle, comparedWith other: FeatureToggle) -> Lineage {
        if let what = difference(copy, other) {
            if copy.position.offset < other.position.offset { return .behind }
            if copy.position.offset > other.position.offset { return .ahead }
            return .diverged(what)
        }
        return .identical
    }

    /// What differs between two copies of a toggle (ignoring epochs), or nil.
    public static func difference(_ a: FeatureToggle, _ b: FeatureToggle) -> String? {
        var parts: [String] = []
        if a.app != b.app || a.name != b.name { parts.append("toggle \(a.app)/\(a.name) vs \(b.app)/\(b.name)") }
        if a.value != b.value { parts.append("value \(a.value) vs \(b.value)") }
        if a.position.offset != b.position.offset { parts.append("offset \(a.position.offset) vs \(b.position.offset)") }
        if a.updatedAtMillis != b.updatedAtMillis { parts.append("timestamp \(a.updatedAtMillis) vs \(b.updatedAtMillis)") }
        return parts.isEmpty ? nil : parts.joined(separator: "; ")
    }

    /// What importing `imported` over `stored` (nil: the store does not hold it) does under `policy`; throws
    /// `.conflict` saying which side holds what when the policy refuses. `.identical` means: write nothing.
    public static func importOutcome(
        stored: (snapshot: OrderSnapshot, history: [OrderChangeRecord])?,
        imported: (snapshot: OrderSnapshot, history: [OrderChangeRecord]),
        policy: ImportPolicy
    ) throws(StoreError) -> ImportOutcome {
        guard let stored else { return .created }
        let lineage = lineage(of: stored, comparedWith: imported)
        return try outcome(
            lineage,
            policy: policy,
            name: "\(imported.snapshot.line)/\(imported.snapshot.orderID)",
            held: describe(stored.snapshot),
            offered: describe(imported.snapshot)
        )
    }

    /// `importOutcome` for a toggle.
    public static func importOutcome(stored: FeatureToggle?, imported: FeatureToggle, policy: ImportPolicy)
        throws(StoreError) -> ImportOutcome
    {
        guard let stored else { return .created }
        return try outcome(
            lineage(of: stored, comparedWith: imported),
            policy: policy,
            name: "toggle \(imported.app)/\(imported.name)",
            held: describe(stored),
            offered: describe(imported)
        )
    }

    /// An order's state for reports: `offset 5 (driver_arrived)`.
    public static func describe(_ snapshot: OrderSnapshot) -> String {
        "offset \(snapshot.position.offset) (\(snapshot.state))"
    }

    /// A toggle's state for reports: `25% at offset 2`.
    public static func describe(_ toggle: FeatureToggle) -> String {
        "\(toggle.value) at offset \(toggle.position.offset)"
    }

    private static func outcome(_ lineage: Lineage, policy: ImportPolicy, name: String, held: String, offered: String)
        throws(StoreError) -> ImportOutcome
    {
        switch (lineage, policy) {
        case (.identical, _): return .identical
        case (.behind, .extend), (.behind, .replace): return .extended
        case (_, .replace): return .replaced
        case (.behind, .refuseDifferent):
            throw .conflict("\(name): this store holds an earlier state, \(held); the import is at \(offered)")
        case (.ahead, _):
            throw .conflict("\(name): this store is ahead, at \(held); the import is at \(offered)")
        case (.diverged(let what), _):
            throw .conflict("\(name): the copies diverged: this store holds \(held), the import \(offered); \(what)")
        }
    }

    /// Whether `earlier` is `later` as it was at `earlier`'s offset (see `lineage(of:comparedWith:)`).
    private static func isEarlierState(
        _ earlier: (snapshot: OrderSnapshot, history: [OrderChangeRecord]),
        of later: (snapshot: OrderSnapshot, history: [OrderChangeRecord])
    ) -> Bool {
        let a = earlier.snapshot
        let b = later.snapshot
        guard a.line == b.line, a.orderID == b.orderID, a.kind == b.kind, a.createdAtMillis == b.createdAtMillis else {
            return false
        }
        for record in earlier.history {
            guard let match = retained(at: record.position.offset, in: later.history) else { continue }
            if difference(record, match) != nil { return false }
        }
        return true
    }

    /// The first record both copies retain that differs, described; nil when they agree on every shared offset.
    private static func firstDivergence(
        _ a: (snapshot: OrderSnapshot, history: [OrderChangeRecord]),
        _ b: (snapshot: OrderSnapshot, history: [OrderChangeRecord])
    ) -> String? {
        if a.snapshot.createdAtMillis != b.snapshot.createdAtMillis {
            return "created at \(a.snapshot.createdAtMillis) vs \(b.snapshot.createdAtMillis)"
        }
        for record in a.history {
            guard let match = retained(at: record.position.offset, in: b.history) else { continue }
            if let what = difference(record, match) { return "record at offset \(record.position.offset) differs: \(what)" }
        }
        return nil
    }

    /// The record at `offset` of a contiguous history, or nil when it is not retained there.
    private static func retained(at offset: UInt64, in history: [OrderChangeRecord]) -> OrderChangeRecord? {
        guard let first = history.first?.position.offset, offset >= first else { return nil }
        let index = Int(offset - first)
        guard index < history.count, history[index].position.offset == offset else { return nil }
        return history[index]
    }
}
