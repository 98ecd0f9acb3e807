internal import CLonglinkOpenSSL
import LonglinkLoop

/// Turns OpenSSL's view of a failed handshake (the certificate verification result, the first queued error's
/// reason code) into a `TLSFailureCause` a client can act on, so no OpenSSL constant leaves this adapter.
enum TLSFailureClassifier {
    /// The cause for a failed handshake or read: a refused certificate wins, then a peer that does not speak TLS.
    static func cause(verifyResult: Int, errorReason: Int32) -> TLSFailureCause {
        switch Int32(truncatingIfNeeded: verifyResult) {
        case X509_V_OK: break
        case X509_V_ERR_CERT_HAS_EXPIRED: return .certificateExpired
        case X509_V_ERR_CERT_NOT_YET_VALID: return .certificateNotYetValid
        case X509_V_ERR_HOSTNAME_MISMATCH, X509_V_ERR_IP_ADDRESS_MISMATCH: return .nameMismatch
        case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT, X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT,
            X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY, X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
            return .unknownAuthority
        default: return .certificateRejected
        }
        switch errorReason {
        case SSL_R_WRONG_VERSION_NUMBER, SSL_R_PACKET_LENGTH_TOO_LONG, SSL_R_HTTP_REQUEST, SSL_R_HTTPS_PROXY_REQUEST:
            return .notTLS
        default:
            return .handshakeFailed
        }
    }

    /// The reason code of the oldest error on this thread's OpenSSL queue (0 when empty), without removing it.
    static func queuedErrorReason() -> Int32 { ERR_GET_REASON(ERR_peek_error()) }
}
