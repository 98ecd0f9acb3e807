/// How `OrderStore.importOrder` and `ToggleStore.importToggle` treat data the store already holds that differs from the import.
/// Identical data (ignoring epochs) is always a no-op.
public enum ImportPolicy: Hashable, Sendable {
    /// Anything different is `.conflict`.
    case refuseDifferent
    /// A stored copy that is an earlier state of the imported one (`ChangeValidation.Lineage.behind`: the import
    /// continues its history) is brought up to date; one that is ahead or diverged is `.conflict`. How a migration
    /// run again after the source moved on catches up.
    case extend
    /// Whatever is stored is replaced (an order together with its idempotency keys).
    case replace
}

/// What an import did.
public enum ImportOutcome: Hashable, Sendable {
    /// The store did not hold it; it was written.
    case created
    /// The store held the same data; nothing was written.
    case identical
    /// The store held an earlier state of it; it was brought up to date.
    case extended
    /// The store held different data; it was replaced (only with `ImportPolicy.replace`).
    case replaced
}
