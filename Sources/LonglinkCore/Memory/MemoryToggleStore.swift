/// A `ToggleStore` in memory: the toggles of a gateway running on the memory store, and of tests. Nothing survives
/// the process; each instance starts a new random epoch unless given one.
///
/// Like every store it is owned by one thread at a time and is not `Sendable`.
public final class MemoryToggleStore: ToggleStore {
    /// The epoch of new toggle positions.
    public let epoch: UInt32
    /// The toggles by route.
    private var table: [Route: FeatureToggle] = [:]
    private var closed = false

    /// Creates an empty store.
    /// - Parameter epoch: the generation of toggle positions (default: random, never 0).
    public init(epoch: UInt32? = nil) {
        self.epoch = epoch ?? UInt32.random(in: 1...UInt32.max)
    }

    public func setToggle(app: String, name: String, value: ToggleValue, nowMillis: UInt64) throws(StoreError) -> FeatureToggle {
        guard !closed else { throw .closed }
        guard var toggle = FeatureToggle(app: app, name: name, value: value) else { throw .invalidToggle(app: app, name: name) }
        let previous = table[toggle.route]
        let offset = previous.map { $0.position.epoch == epoch ? $0.position.offset + 1 : 1 } ?? 1
        toggle.position = StreamPosition(epoch: epoch, offset: offset)
        toggle.updatedAtMillis = nowMillis
        table[toggle.route] = toggle
        return toggle
    }

    public func toggles(app: String?) throws(StoreError) -> [FeatureToggle] {
        guard !closed else { throw .closed }
        return table.values.filter { app == nil || $0.app == app }.sorted { ($0.app, $0.name) < ($1.app, $1.name) }
    }

    public func toggle(app: String, name: String) throws(StoreError) -> FeatureToggle? {
        guard !closed else { throw .closed }
        guard let route = FeatureToggle(app: app, name: name, value: .bool(false))?.route else { return nil }
        return table[route]
    }

    @discardableResult
    public func importToggle(_ toggle: FeatureToggle, policy: ImportPolicy) throws(StoreError) -> ImportOutcome {
        guard !closed else { throw .closed }
        guard toggle.position.offset >= 1 else { throw .invalidField("toggle \(toggle.app)/\(toggle.name): offset 0") }
        var imported = toggle
        imported.position.epoch = epoch
        let outcome = try ChangeValidation.importOutcome(stored: table[toggle.route], imported: imported, policy: policy)
        if outcome != .identical { table[toggle.route] = imported }
        return outcome
    }

    /// Forgets every toggle; further calls throw `.closed`.
    public func shutdown() {
        closed = true
        table.removeAll()
    }
}

@available(*, unavailable)
extension MemoryToggleStore: Sendable {}
