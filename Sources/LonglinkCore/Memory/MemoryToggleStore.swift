extension MemoryOrderStore {
    public func setToggle(app: String, name: String, value: ToggleValue, nowMillis: UInt64) throws(StoreError) -> FeatureToggle {
        guard var toggle = FeatureToggle(app: app, name: name, value: value) else {
            throw .invalidField("toggle '\(app)/\(name)': app must be [a-z0-9_-] (32) and name [A-Za-z0-9_.-] (64)")
        }
        let previous = toggleTable[toggle.route]
        let offset = previous.map { $0.position.epoch == epoch ? $0.position.offset + 1 : 1 } ?? 1
        toggle.position = StreamPosition(epoch: epoch, offset: offset)
        toggle.updatedAtMillis = nowMillis
        toggleTable[toggle.route] = toggle
        return toggle
    }

    public func toggles(app: String?) throws(StoreError) -> [FeatureToggle] {
        toggleTable.values.filter { app == nil || $0.app == app }.sorted { ($0.app, $0.name) < ($1.app, $1.name) }
    }

    public var keepsToggles: Bool { true }

    @discardableResult
    public func importToggle(_ toggle: FeatureToggle, policy: ImportPolicy) throws(StoreError) -> ImportOutcome {
        guard toggle.position.offset >= 1 else { throw .invalidField("toggle \(toggle.app)/\(toggle.name): offset 0") }
        var imported = toggle
        imported.position.epoch = epoch
        let outcome = try ChangeValidation.importOutcome(stored: toggleTable[toggle.route], imported: imported, policy: policy)
        if outcome != .identical { toggleTable[toggle.route] = imported }
        return outcome
    }
}
