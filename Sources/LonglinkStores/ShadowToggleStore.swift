public import LonglinkCore

/// Toggles are the primary's; the shadow stores each value the primary set as set (`importToggle`: same value,
/// offset and time), so a later switch finds them there, and differences are reported like the orders'.
extension ShadowOrderStore {
    public func setToggle(app: String, name: String, value: ToggleValue, nowMillis: UInt64) throws(StoreError) -> FeatureToggle {
        let toggle = try primary.setToggle(app: app, name: name, value: value, nowMillis: nowMillis)
        do {
            _ = try shadow.importToggle(toggle, policy: .extend)
        } catch {
            report("setToggle", .shadowFailed, nil, nil, "toggle \(app)/\(name): \(error)")
        }
        return toggle
    }

    public func toggles(app: String?) throws(StoreError) -> [FeatureToggle] {
        let first = Result { () throws(StoreError) in try primary.toggles(app: app) }
        if compareReads, case .success(let mine) = first {
            switch Result(catching: { () throws(StoreError) in try shadow.toggles(app: app) }) {
            case .success(let theirs):
                if let what = Self.difference(mine, theirs) { report("toggles", .readDiffers, nil, nil, what) }
            case .failure(let error):
                report("toggles", .shadowFailed, nil, nil, "\(error)")
            }
        }
        return try first.get()
    }

    public var keepsToggles: Bool { primary.keepsToggles }

    @discardableResult
    public func importToggle(_ toggle: FeatureToggle, policy: ImportPolicy) throws(StoreError) -> ImportOutcome {
        let first = Result { () throws(StoreError) in try primary.importToggle(toggle, policy: policy) }
        let second = Result { () throws(StoreError) in try shadow.importToggle(toggle, policy: policy) }
        compareImport(first, second, "importToggle", nil, nil)
        return try first.get()
    }

    /// The first toggle the two lists hold differently (ignoring epochs), or nil.
    private static func difference(_ a: [FeatureToggle], _ b: [FeatureToggle]) -> String? {
        if a.count != b.count { return "\(a.count) toggles vs \(b.count)" }
        for (x, y) in zip(a, b) {
            if let what = ChangeValidation.difference(x, y) { return "toggle \(x.app)/\(x.name): \(what)" }
        }
        return nil
    }
}
