/// Why a TLS handshake failed, in terms an app can act on. The TLS adapter (LonglinkOpenSSL) sets it on the
/// `TransportError` it throws, translating OpenSSL's verification result and error codes, so clients can tell the
/// causes apart without importing OpenSSL. Room for more: pinning adds `pinMismatch` checks, for instance.
public enum TLSFailureCause: Hashable, Sendable, CustomStringConvertible {
    /// The server's certificate (or one in its chain) has expired.
    case certificateExpired
    /// The server's certificate is not valid yet (check the clock).
    case certificateNotYetValid
    /// The certificate was not issued by a trusted CA (unknown issuer, self-signed).
    case unknownAuthority
    /// The certificate is not for the name (or IP address) the client connected to.
    case nameMismatch
    /// The server's public key is not one of the pinned keys.
    case pinMismatch
    /// The certificate was rejected for another reason (revoked, bad signature, wrong purpose, ...).
    case certificateRejected
    /// The peer does not speak TLS (it answered in plain, e.g. a plain Longlink port).
    case notTLS
    /// The handshake failed for another reason (no common protocol version or cipher, an alert from the server).
    case handshakeFailed

    /// Whether the server's certificate was checked and refused: retrying the same server cannot help.
    public var isVerificationFailure: Bool {
        switch self {
        case .certificateExpired, .certificateNotYetValid, .unknownAuthority, .nameMismatch, .pinMismatch, .certificateRejected:
            true
        case .notTLS, .handshakeFailed:
            false
        }
    }

    public var description: String {
        switch self {
        case .certificateExpired: "certificate verify failed: certificate has expired"
        case .certificateNotYetValid: "certificate verify failed: certificate is not yet valid"
        case .unknownAuthority: "certificate verify failed: not issued by a trusted CA"
        case .nameMismatch: "certificate verify failed: certificate is for another host name"
        case .pinMismatch: "certificate verify failed: public key does not match the pinned keys"
        case .certificateRejected: "certificate verify failed"
        case .notTLS: "not a TLS endpoint (the server answered without TLS)"
        case .handshakeFailed: "handshake failed"
        }
    }
}
