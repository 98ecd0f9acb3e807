/// What an observer is told after a change became durable.
public struct ContentChange: Hashable, Sendable {
    /// The route that changed.
    public var route: Route
    /// The record that was stored.
    public var record: OrderChangeRecord
    /// The order right after the change.
    public var snapshot: OrderSnapshot

    public init(route: Route, record: OrderChangeRecord, snapshot: OrderSnapshot) {
        self.route = route
        self.record = record
        self.snapshot = snapshot
    }
}

/// The one notification protocol of Longlink: the Store tells its observers, and the client library tells
/// the app, through `contentDidChange(_:)`. Delegates, closures and async sequences are adapted onto it.
///
/// It is called after the change is durable, never before, on the notifier's thread; an observer must not
/// block. Observers that need another thread hop there themselves.
public protocol ContentObserver: AnyObject, Sendable {
    /// A change happened on a watched route.
    func contentDidChange(_ change: ContentChange)
}
