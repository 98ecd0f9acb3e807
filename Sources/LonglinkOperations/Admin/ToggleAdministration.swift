public import LonglinkCore

/// Feature toggles as the admin API manages them; the composition root implements it over the Store's writer.
/// Completions may run on any thread.
public protocol ToggleAdministration: Sendable {
    /// Every toggle, or those of one app.
    func list(app: String?, completion: @escaping @Sendable (Result<[FeatureToggle], StoreError>) -> Void)
    /// Sets a toggle (creating it or moving it to the next offset); subscribers get the new value.
    func set(app: String, name: String, value: ToggleValue, completion: @escaping @Sendable (Result<FeatureToggle, StoreError>) -> Void)
}
