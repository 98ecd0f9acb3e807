public import LonglinkCore

/// A `ToggleStore` that runs a shadow toggle store beside the primary, as `ShadowOrderStore` does for orders
/// (`--shadow-store`): toggles are the primary's; the shadow stores each value the primary set as set
/// (`importToggle`: same value, offset and time), so a later switch finds them there, and differences go to the
/// same `ShadowDivergenceReporter` as the orders'. A failure of the shadow never fails the primary.
public final class ShadowToggleStore: ToggleStore {
    /// The store whose answers are returned.
    public let primary: any ToggleStore
    /// The store under trial.
    public let shadow: any ToggleStore
    /// Where differences go.
    public let reporter: ShadowDivergenceReporter
    /// Whether reads are also asked of the shadow and compared.
    public let compareReads: Bool

    /// Wraps `primary` with `shadow`.
    public init(primary: any ToggleStore, shadow: any ToggleStore, reporter: ShadowDivergenceReporter, compareReads: Bool = true) {
        self.primary = primary
        self.shadow = shadow
        self.reporter = reporter
        self.compareReads = compareReads
    }

    public var epoch: UInt32 { primary.epoch }

    public func setToggle(app: String, name: String, value: ToggleValue, nowMillis: UInt64) throws(StoreError) -> FeatureToggle {
        let toggle = try primary.setToggle(app: app, name: name, value: value, nowMillis: nowMillis)
        do {
            _ = try shadow.importToggle(toggle, policy: .extend)
        } catch {
            report("setToggle", .shadowFailed, "toggle \(app)/\(name): \(error)")
        }
        return toggle
    }

    public func toggles(app: String?) throws(StoreError) -> [FeatureToggle] {
        let first = Result { () throws(StoreError) in try primary.toggles(app: app) }
        if compareReads, case .success(let mine) = first {
            switch Result(catching: { () throws(StoreError) in try shadow.toggles(app: app) }) {
            case .success(let theirs):
                if let what = Self.difference(mine, theirs) { report("toggles", .readDiffers, what) }
            case .failure(let error):
                report("toggles", .shadowFailed, "\(error)")
            }
        }
        return try first.get()
    }

    @discardableResult
    public func importToggle(_ toggle: FeatureToggle, policy: ImportPolicy) throws(StoreError) -> ImportOutcome {
        let first = Result { () throws(StoreError) in try primary.importToggle(toggle, policy: policy) }
        let second = Result { () throws(StoreError) in try shadow.importToggle(toggle, policy: policy) }
        switch (first, second) {
        case (.success(let a), .success(let b)):
            if a != b { report("importToggle", .resultDiffers, "primary \(a), shadow \(b)") }
        case (.failure(let a), .failure(let b)) where a == b: break
        case (.success, .failure(let error)): report("importToggle", .shadowFailed, "\(error)")
        case (.failure(let error), .success): report("importToggle", .primaryFailed, "\(error)")
        case (.failure(let a), .failure(let b)): report("importToggle", .errorDiffers, "\(a) vs \(b)")
        }
        return try first.get()
    }

    /// Shuts both down.
    public func shutdown() {
        primary.shutdown()
        shadow.shutdown()
    }

    private func report(_ operation: String, _ kind: ShadowDivergence.Kind, _ detail: String) {
        reporter.report(ShadowDivergence(operation: operation, kind: kind, line: nil, orderID: nil, detail: detail))
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

@available(*, unavailable)
extension ShadowToggleStore: Sendable {}
