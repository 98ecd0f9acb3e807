public import LonglinkCore

/// Why a client call (`publish`, `history`, `waitUntilConnected`) failed.
public enum ClientError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The server refused the request (typed error with its numbered code).
    case refused(ErrorFrame)
    /// No answer within the timeout (the change may or may not have been applied; retry with the same key).
    case timeout
    /// The app closed the client.
    case closed
    /// The client could not connect, or stopped, for this reason (refused, host not found, TLS, token, ...).
    case connectionFailed(ConnectionFailure)

    public var description: String {
        switch self {
        case .refused(let error): "refused: \(error)"
        case .timeout: "timed out waiting for the gateway"
        case .closed: "the client was closed"
        case .connectionFailed(let failure): "\(failure)"
        }
    }
}

/// A publish the Store accepted.
public struct PublishReceipt: Sendable, Hashable, CustomStringConvertible {
    /// Where the record sits in the order's history.
    public var position: StreamPosition
    /// When the Store accepted it (ms since the Unix epoch).
    public var timestampMillis: UInt64
    /// True when the idempotency key had been applied before (a retry); nothing new was stored.
    public var deduplicated: Bool
    /// The idempotency key used.
    public var idempotencyKey: String

    public var description: String {
        "stored at \(position) (key \(idempotencyKey))\(deduplicated ? ", a replay of an earlier publish" : "")"
    }
}
