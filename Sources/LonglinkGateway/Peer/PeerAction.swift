public import LonglinkCore

/// What the gateway must do on behalf of a peer, as decided by `PeerStateMachine`. The state machine does no
/// I/O; the connection carries these out in order.
public enum PeerAction: Hashable, Sendable {
    /// Encode and queue a frame for this connection.
    case send(ServerFrame)
    /// Start delivering `route` to this peer, then read its snapshot (and the records after `since`) and
    /// report back with `subscribeCompleted`.
    case subscribe(Route, since: StreamPosition?, requestID: UInt32)
    /// Stop delivering `route` to this peer.
    case unsubscribe(Route)
    /// Hand the change to the Store's writer and report back with `publishCompleted`.
    case publish(OrderChange, requestID: UInt32, wantsReceipts: Bool)
    /// The client processed `route` up to `offset`.
    case acknowledged(Route, offset: UInt64)
    /// Send this disconnect frame, flush, close.
    case close(Disconnect)
    /// Read who is subscribed to `route` and answer with `presenceReply`.
    case presence(Route, requestID: UInt32)
}

/// What the state machine decided about one record for one peer.
public enum DeliveryDecision: Hashable, Sendable {
    /// Send the shared push bytes.
    case send
    /// The subscription is waiting for its snapshot: the record was kept and will follow `subscribed`.
    case held
    /// Not for this peer (not subscribed, or already covered by its snapshot or an earlier push).
    case ignore
}

/// The outcome of the snapshot read behind a subscribe.
public struct SubscribeRead: Hashable, Sendable {
    /// The store's epoch at the time of the read.
    public var epoch: UInt32
    /// The order now; nil when it has no record.
    public var snapshot: OrderSnapshot?
    /// Records after the client's position (nil when the client gave none).
    public var history: HistoryRead?

    public init(epoch: UInt32, snapshot: OrderSnapshot?, history: HistoryRead?) {
        self.epoch = epoch
        self.snapshot = snapshot
        self.history = history
    }
}
