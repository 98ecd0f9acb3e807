import Glibc
import LonglinkCore
import LonglinkLoop

/// How the driver names what went wrong: system-call errors, transport errors and disconnect frames become the
/// typed `ConnectionFailure` the app sees.
extension ConnectionFailure {
    /// A failed socket call while connecting to `host:port`.
    static func socket(_ error: IOError, host: String, port: Int) -> ConnectionFailure {
        switch error.errno {
        case ECONNREFUSED: .connectionRefused(host: host, port: port)
        case ECONNRESET, EPIPE, ECONNABORTED: .connectionLost("connection reset by the peer")
        default: .network(error.reason.lowercasedFirst)
        }
    }

    /// A transport that failed before the Longlink handshake (TCP connect, TLS handshake).
    static func handshake(_ error: TransportError, host: String, port: Int) -> ConnectionFailure {
        if let cause = error.tlsCause { return .tls(TLSFailure(cause: cause, detail: error.reason)) }
        if let underlying = error.underlying { return socket(underlying, host: host, port: port) }
        if error.kind == .protocolFailure { return .tls(TLSFailure(cause: .handshakeFailed, detail: error.reason)) }
        return .connectionLost(error.reason)
    }

    /// The server's numbered disconnect.
    init(_ disconnect: Disconnect) {
        let hint: Duration? = disconnect.reconnectAfterMillis > 0 ? .milliseconds(Int64(disconnect.reconnectAfterMillis)) : nil
        switch disconnect.code {
        case .tokenExpired: self = .authentication(.tokenExpired)
        case .invalidToken: self = .authentication(.invalidToken(disconnect.reason))
        case .shutdown: self = .serverShuttingDown(reconnectAfter: hint)
        case .tooManyConnections: self = .tooManyConnections(reconnectAfter: hint)
        default: self = .disconnected(disconnect)
        }
    }

    /// The connection ended before `connected`, after the transport was up: a Longlink server always answers
    /// `connect` (with `connected` or a disconnect frame), so a silent close means the peer speaks something else.
    static func closedBeforeHandshake(encrypted: Bool, receivedBytes: Bool) -> ConnectionFailure {
        if receivedBytes { return .notLonglink("the server's answer to connect is not a Longlink frame") }
        if encrypted { return .notLonglink("the server closed the connection without answering connect") }
        return .notLonglink("the server closed the connection without answering connect (a TLS port? connect with TLS)")
    }
}

extension String {
    /// "Connection refused" → "connection refused", for errno texts inside sentences.
    fileprivate var lowercasedFirst: String { prefix(1).lowercased() + dropFirst() }
}
