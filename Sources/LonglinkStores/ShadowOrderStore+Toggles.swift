public import LonglinkCore

/// Toggles are the primary's; the shadow gets the same writes (best effort) so a later switch finds them there.
extension ShadowOrderStore {
    public func setToggle(app: String, name: String, value: ToggleValue, nowMillis: UInt64) throws(StoreError) -> FeatureToggle {
        let toggle = try primary.setToggle(app: app, name: name, value: value, nowMillis: nowMillis)
        _ = try? shadow.setToggle(app: app, name: name, value: value, nowMillis: nowMillis)
        return toggle
    }

    public func toggles(app: String?) throws(StoreError) -> [FeatureToggle] {
        try primary.toggles(app: app)
    }
}
