public import LonglinkCore
public import LonglinkLoop

/// Why a connection attempt failed, a connection ended, or the client stopped: what an app shows and acts on.
///
/// `isTerminal` failures stop the client (`ConnectionState.stopped`), because retrying with the same settings
/// cannot help: the server refused the token, the server's certificate was refused, or the server said not to come
/// back. Every other failure is retried with backoff (`ConnectionState.waitingToRetry`), honouring the server's
/// reconnect hint. Cases may be added in later versions.
public enum ConnectionFailure: Error, Hashable, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// Nothing accepts connections at the address (`ECONNREFUSED`): no gateway runs there, or a firewall refuses.
    case connectionRefused(host: String, port: Int)
    /// The host name does not resolve (or the resolver could not answer, e.g. without a network).
    case hostNotFound(String)
    /// The network path failed before a connection existed (unreachable network or host, connect timeout, ...);
    /// the system's words.
    case network(String)
    /// No `connected` arrived within the connect timeout.
    case timedOut(Duration)
    /// An established (or establishing) connection dropped without a disconnect frame: end of stream, reset, a
    /// silent server.
    case connectionLost(String)
    /// The TLS handshake failed; the cause says why (certificate expired, unknown CA, name mismatch, plain peer, ...).
    case tls(TLSFailure)
    /// The peer does not speak Longlink: it answered with something else, or closed without answering `connect`
    /// (a TLS port spoken to without TLS looks like this).
    case notLonglink(String)
    /// The server refused the token.
    case authentication(AuthenticationFailure)
    /// The server is draining or shutting down; it suggested when to come back.
    case serverShuttingDown(reconnectAfter: Duration?)
    /// The server (or this client's address) holds its maximum number of connections.
    case tooManyConnections(reconnectAfter: Duration?)
    /// The server closed the session with another numbered reason (`slow`, `forbidden`, `admin_ban`, ...).
    case disconnected(Disconnect)

    /// Whether retrying with the same settings cannot help, so the client stops instead of reconnecting.
    public var isTerminal: Bool {
        switch self {
        case .authentication: true
        case .tls(let failure): failure.cause.isVerificationFailure
        case .disconnected(let disconnect): !disconnect.shouldReconnect
        case .connectionRefused, .hostNotFound, .network, .timedOut, .connectionLost, .notLonglink, .serverShuttingDown,
            .tooManyConnections:
            false
        }
    }

    /// How long the server asked the client to wait before reconnecting, when it said.
    public var reconnectHint: Duration? {
        switch self {
        case .serverShuttingDown(let after), .tooManyConnections(let after): after
        case .disconnected(let disconnect) where disconnect.reconnectAfterMillis > 0:
            .milliseconds(Int64(disconnect.reconnectAfterMillis))
        default: nil
        }
    }

    public var description: String {
        switch self {
        case .connectionRefused(let host, let port): "connection refused by \(HostPortText.text(host, port)) (is the gateway running there?)"
        case .hostNotFound(let host): "host not found: \(host)"
        case .network(let reason): "network error: \(reason)"
        case .timedOut(let timeout): "no answer from the gateway within \(DurationText.text(timeout))"
        case .connectionLost(let reason): "connection lost: \(reason)"
        case .tls(let failure): "\(failure)"
        case .notLonglink(let reason): "not a Longlink endpoint: \(reason)"
        case .authentication(let failure): "\(failure)"
        case .serverShuttingDown(let after):
            "the gateway is shutting down" + (after.map { "; come back in \(DurationText.text($0))" } ?? "")
        case .tooManyConnections(let after):
            "the gateway holds its maximum number of connections" + (after.map { "; come back in \(DurationText.text($0))" } ?? "")
        case .disconnected(let disconnect): "disconnected by the gateway: \(disconnect)"
        }
    }

    public var debugDescription: String {
        "ConnectionFailure(\(isTerminal ? "terminal" : "retried")): \(description)"
    }
}

/// The server refused the token: get a new one (a retry with the same token fails the same way).
public enum AuthenticationFailure: Hashable, Sendable, CustomStringConvertible {
    /// The token is malformed, badly signed, not yet valid, for another issuer or audience; the server's reason.
    case invalidToken(String)
    /// The token has expired (at connect, or during the session without a `refresh`).
    case tokenExpired
    /// The app's token provider failed (its error, in its own words) or gave back the token the server had just
    /// refused; the client stopped instead of reconnecting with a token that cannot work.
    case tokenUnavailable(String)

    public var description: String {
        switch self {
        case .tokenUnavailable(let reason): "no usable token: \(reason)"
        case .invalidToken(let reason): reason.hasPrefix("invalid token") ? reason : "invalid token: \(reason)"
        case .tokenExpired: "token expired; connect with a fresh token"
        }
    }
}

/// A failed TLS handshake: the cause an app acts on, and OpenSSL's own words for the logs.
public struct TLSFailure: Hashable, Sendable, CustomStringConvertible {
    /// Why, in terms an app can act on.
    public var cause: TLSFailureCause
    /// The TLS library's detail (error string, verification result).
    public var detail: String

    /// Creates a failure.
    public init(cause: TLSFailureCause, detail: String) {
        self.cause = cause
        self.detail = detail
    }

    public var description: String {
        switch cause {
        case .handshakeFailed, .certificateRejected: "TLS: \(cause): \(detail)"
        default: "TLS: \(cause)"
        }
    }
}

/// Short texts for durations and addresses in messages.
enum DurationText {
    /// `250 ms`, `1.5 s`, `10 s`.
    static func text(_ duration: Duration) -> String {
        let millis = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        if millis < 1000 { return "\(millis) ms" }
        if millis % 1000 == 0 { return "\(millis / 1000) s" }
        return "\(millis / 1000).\(millis % 1000 / 100) s"
    }
}

/// `host:port`, with brackets around an IPv6 literal.
enum HostPortText {
    static func text(_ host: String, _ port: Int) -> String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}
