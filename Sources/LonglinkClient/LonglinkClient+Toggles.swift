public import LonglinkCore
import Synchronization

/// Remote feature toggles: values an operator sets on `config://<app>/<name>` routes (`longlink toggles set`),
/// pushed like any other change. Observe them with the usual adapters (`observe(FeatureToggle.route(...))`,
/// `changes(of:)`), and ask `isEnabled` anywhere, synchronously: it answers from the last value received.
extension LonglinkClient {
    /// The route of toggle `name` of `app` (nil when either is not a valid route part).
    public static func toggleRoute(_ name: String, app: String) -> Route? {
        FeatureToggle(app: app, name: name, value: .bool(false))?.route
    }

    /// Subscribes to toggle `name` of `app` (its value then arrives like a change, and `isEnabled` can answer).
    public func watchToggle(_ name: String, app: String) {
        if let route = Self.toggleRoute(name, app: app) { subscribe(route) }
    }

    /// Observes toggle `name` of `app` with a closure, told the toggle each time its value arrives.
    public func observeToggle(
        _ name: String,
        app: String,
        _ block: @escaping @Sendable (FeatureToggle) -> Void
    ) -> ObservationToken? {
        guard let route = Self.toggleRoute(name, app: app) else { return nil }
        return observe(route) { change in
            if let toggle = FeatureToggle(change) { block(toggle) }
        }
    }

    /// Whether toggle `name` of `app` is on, from the last value received (false before any arrived). A rollout
    /// is decided by `userID`'s stable bucket (`ToggleValue.bucket`); without a user id a rollout is on only at 100%.
    public func isEnabled(_ name: String, app: String, userID: String? = nil) -> Bool {
        guard let toggle = toggle(name, app: app) else { return false }
        if case .rollout(let percent) = toggle.value, userID == nil { return percent >= 100 }
        return toggle.isEnabled(for: userID ?? "")
    }

    /// The last value received for toggle `name` of `app`, nil before any arrived.
    public func toggle(_ name: String, app: String) -> FeatureToggle? {
        guard let route = Self.toggleRoute(name, app: app) else { return nil }
        return shared.toggleValues.value(of: route)
    }
}

extension FeatureToggle {
    /// The toggle a change on a `config://` route carries.
    public init?(_ change: ContentChange) {
        self.init(
            route: change.route,
            fields: change.snapshot.fields,
            position: change.snapshot.position,
            updatedAtMillis: change.snapshot.updatedAtMillis
        )
    }
}

/// The last toggle value per `config://` route, updated by the driver before observers are told.
final class ToggleCache: Sendable {
    private let values = Mutex<[Route: FeatureToggle]>([:])

    func record(_ change: ContentChange) {
        guard change.route.kind == .config, let toggle = FeatureToggle(change) else { return }
        values.withLock { $0[change.route] = toggle }
    }

    func value(of route: Route) -> FeatureToggle? { values.withLock { $0[route] } }
}
