public import LonglinkCore

/// The client's connection, as the app may show it (`LonglinkClient.state`, `stateChanges()`):
///
///     idle ─▶ connecting ─▶ connected ─(lost)─▶ waitingToRetry ─(delay)─▶ connecting ─▶ …
///                  │                                                          │
///                  └──(failed: reason)──▶ waitingToRetry        (terminal reason, or close()) ──▶ stopped
public enum ConnectionState: Sendable, Hashable, CustomStringConvertible {
    /// Not started.
    case idle
    /// Attempt `attempt` (0-based) is in progress.
    case connecting(attempt: Int)
    /// Connected; carries the server's session parameters.
    case connected(Connected)
    /// The last attempt failed, or the connection was lost, for `reason`; attempt `attempt` starts after `delay`.
    case waitingToRetry(attempt: Int, delay: Duration, reason: ConnectionFailure)
    /// Stopped for good: by the app (`close()`, reason nil) or for a reason retrying cannot fix
    /// (`ConnectionFailure.isTerminal`: a refused token or certificate, a do-not-reconnect disconnect), or, with
    /// `reconnects` off, for the reason the connection ended.
    case stopped(ConnectionFailure?)

    public var description: String {
        switch self {
        case .idle: "idle"
        case .connecting(let attempt): "connecting (attempt \(attempt + 1))"
        case .connected(let info): "connected to \(info.nodeID) as \(info.clientID)"
        case .waitingToRetry(let attempt, let delay, let reason):
            "retrying in \(DurationText.text(delay)) (attempt \(attempt + 1)) after: \(reason)"
        case .stopped(let reason): reason.map { "stopped: \($0)" } ?? "stopped by the app"
        }
    }

    /// Whether the client is connected.
    public var isConnected: Bool {
        if case .connected = self { true } else { false }
    }

    /// Whether the client stopped for good.
    public var isStopped: Bool {
        if case .stopped = self { true } else { false }
    }

    /// The failure behind a `waitingToRetry` or `stopped` state; nil otherwise (and when the app closed the client).
    public var failure: ConnectionFailure? {
        switch self {
        case .waitingToRetry(_, _, let reason): reason
        case .stopped(let reason): reason
        case .idle, .connecting, .connected: nil
        }
    }
}
