/// What an observer is told after a change became durable.
public struct ContentChange: Hashable, Sendable {
    /// Why the observer is told.
    public enum Kind: Hashable, Sendable {
        /// A new record was stored (the usual case).
        case change
        /// The current state on subscribe, before any change (client library); `record` is synthesized from
        /// the snapshot (no from-state).
        case snapshot
        /// History could not be recovered after a reconnect (`recovered = false`): the snapshot replaces what
        /// the app knew; `record` is synthesized from the snapshot.
        case resync
    }

    /// Why the observer is told.
    public var kind: Kind
    /// The route that changed.
    public var route: Route
    /// The record that was stored.
    public var record: OrderChangeRecord
    /// The order right after the change.
    public var snapshot: OrderSnapshot

    public init(route: Route, record: OrderChangeRecord, snapshot: OrderSnapshot, kind: Kind = .change) {
        self.kind = kind
        self.route = route
        self.record = record
        self.snapshot = snapshot
    }

    /// A `.snapshot` or `.resync` notification for a snapshot, with a record synthesized from it.
    public init(snapshot: OrderSnapshot, kind: Kind) {
        let record = OrderChangeRecord(
            orderID: snapshot.orderID,
            line: snapshot.line,
            fromState: nil,
            toState: snapshot.state,
            fields: snapshot.fields,
            position: snapshot.position,
            timestampMillis: snapshot.updatedAtMillis,
            kind: snapshot.kind
        )
        self.init(route: snapshot.route, record: record, snapshot: snapshot, kind: kind)
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
