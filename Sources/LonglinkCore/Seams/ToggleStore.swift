/// The storage of remote feature toggles (`FeatureToggle`), behind which memory, SQLite and Redis (one server or a
/// cluster) implementations sit, and the shadow decorator. Toggles are not orders: no state machine, no history,
/// only each toggle's current value and the position of its last change; they usually live in the same backend as
/// the orders (the same SQLite file, the same Redis under the same key prefix), but behind their own seam.
///
/// Contract every implementation keeps (checked by `ToggleStoreContract` in LonglinkTestSupport):
/// - `setToggle` refuses an app or name that is not a valid `config://` route part with `.invalidField` and stores
///   nothing; otherwise it stores `value` with the next offset of that toggle in this store's `epoch` (1 for a new
///   toggle, or when the stored one is from another epoch), stamped `nowMillis`, and returns it.
/// - `toggles(app:)` lists the toggles of one app (every toggle when nil), sorted by app then name.
/// - `importToggle` writes a toggle as another store holds it (value, offset and time kept, position re-stamped
///   into this store's epoch); `policy` decides over different stored data, as for `OrderStore.importOrder`
///   (`ChangeValidation.importOutcome`): identical is a no-op, an earlier stored offset is brought up to date with
///   `.extend`, anything else is `.conflict` unless `.replace`.
/// - A durable store keeps its toggles, and their offsets continue, after a reopen.
/// - After `shutdown()` every call throws `.closed`.
///
/// A toggle store is owned by one thread at a time, like an `OrderStore`; it is not `Sendable`.
public protocol ToggleStore: AnyObject {
    /// The epoch new toggle positions get (see `StreamPosition`).
    var epoch: UInt32 { get }

    /// Sets a toggle (see the contract above) and returns it as stored.
    func setToggle(app: String, name: String, value: ToggleValue, nowMillis: UInt64) throws(StoreError) -> FeatureToggle

    /// The toggles of `app` (every toggle when nil), sorted by app then name.
    func toggles(app: String?) throws(StoreError) -> [FeatureToggle]

    /// One toggle, or nil. A default implementation filters `toggles(app:)`.
    func toggle(app: String, name: String) throws(StoreError) -> FeatureToggle?

    /// Writes a toggle as another store holds it; `policy` decides over a different stored value.
    @discardableResult
    func importToggle(_ toggle: FeatureToggle, policy: ImportPolicy) throws(StoreError) -> ImportOutcome

    /// Flushes and closes. The store is unusable afterwards.
    func shutdown()
}

extension ToggleStore {
    /// Filters `toggles(app:)`.
    public func toggle(app: String, name: String) throws(StoreError) -> FeatureToggle? {
        try toggles(app: app).first { $0.name == name }
    }

    /// Does nothing: stores without resources to release need not implement it.
    public func shutdown() {}
}

extension StoreError {
    /// The refusal of a toggle address that is not a valid `config://` route part.
    public static func invalidToggle(app: String, name: String) -> StoreError {
        .invalidField("toggle '\(app)/\(name)': app must be [a-z0-9_-] (32) and name [A-Za-z0-9_.-] (64)")
    }
}
