internal import CLonglinkOpenSSL
import Synchronization

/// A configured OpenSSL `SSL_CTX`, shared by every loop thread, that can be reloaded (new certificate files on
/// SIGHUP) without touching live connections: each `SSL` holds its own reference to the context it was made
/// from, so connections already open keep theirs and only new connections use the reloaded one.
public final class TLSContext: Sendable {
    /// The configuration it was built from (and is rebuilt from on `reload()`).
    public let configuration: TLSConfiguration
    private let current: Mutex<SSLContextHandle>
    private let reloads = Atomic<Int>(0)

    /// Builds the context, reading the certificate, key and CA files now; throws if any is unusable.
    public init(_ configuration: TLSConfiguration) throws(TLSError) {
        self.configuration = configuration
        self.current = Mutex(try SSLContextHandle(configuration, previous: nil))
    }

    /// Re-reads the files and swaps the context for new connections. On failure the old context stays in use
    /// and the error is thrown (a bad certificate on disk never takes the listener down).
    ///
    /// Session tickets: random rotating keys carry over to the new context (tickets issued before the reload still
    /// resume); a ticket key file is read again (put a new key in front of the old one to rotate).
    public func reload() throws(TLSError) {
        let fresh = try SSLContextHandle(configuration, previous: handle)
        current.withLock { $0 = fresh }
        reloads.add(1, ordering: .relaxed)
    }

    /// Successful reloads so far.
    public var reloadCount: Int { reloads.load(ordering: .relaxed) }

    /// Server contexts: session tickets encrypted so far by the current context's ticket keys, new and renewed (a
    /// resumption only gets one when its ticket is past half its lifetime or under an older key). Random rotating
    /// keys carry their count over a reload; a key file's reload starts again at 0. 0 without tickets.
    public var sessionTicketsIssued: Int { Int(CLonglinkOpenSSL_CTX_tickets_issued(handle.context)) }

    /// Client contexts that resume sessions: session tickets received from servers and kept for the next
    /// connection. 0 otherwise.
    public var sessionTicketsReceived: Int { Int(CLonglinkOpenSSL_CTX_sessions_saved(handle.context)) }

    /// The context new connections use now.
    var handle: SSLContextHandle { current.withLock { $0 } }
}

/// Owns one `SSL_CTX`.
///
/// Sendable with one field-level exception, the `SSL_CTX` pointer (C pointers are not Sendable): OpenSSL documents
/// an `SSL_CTX` as safe to share between threads once configured ("SSL_CTX objects may be used by multiple threads
/// concurrently as long as they are not modified", openssl-threads(7)); this class configures it completely in
/// `init`, never modifies it afterwards, and only calls `SSL_new` on it from the loop threads. Its reference count
/// is OpenSSL's, and thread-safe. The two stores the resumption callbacks use (the server's ticket keys, a client's
/// saved sessions) hang off the context as C objects of the shim with their own mutex, and are changed only from
/// inside those callbacks. Every other field is checked by the compiler.
final class SSLContextHandle: Sendable {
    nonisolated(unsafe) let context: OpaquePointer
    /// Accepted server key digests (client contexts with pinning); empty: no pinning.
    let pins: [[UInt8]]
    /// Client contexts: whether transports offer saved sessions.
    let resumesSessions: Bool

    /// Configures a new `SSL_CTX`. `previous` (a reload) hands its random ticket keys over.
    init(_ configuration: TLSConfiguration, previous: SSLContextHandle?) throws(TLSError) {
        let method = configuration.role == .server ? TLS_server_method() : TLS_client_method()
        guard let context = SSL_CTX_new(method) else { throw TLSError("SSL_CTX_new: \(OpenSSLErrors.last())") }
        self.context = context
        self.pins = configuration.pinnedPublicKeySHA256
        self.resumesSessions = configuration.role == .client && configuration.resumesSessions
        for pin in pins where pin.count != 32 {
            throw TLSError("a public-key pin must be a SHA-256 digest (32 bytes), not \(pin.count) bytes")
        }
        let minimum = configuration.minimumVersion == .tls13 ? TLS1_3_VERSION : TLS1_2_VERSION
        let maximum = configuration.maximumVersion == .tls12 ? TLS1_2_VERSION : 0
        guard CLonglinkOpenSSL_CTX_set_proto_versions(context, minimum, maximum) == 1 else {
            throw TLSError("cannot set protocol versions: \(OpenSSLErrors.last())")
        }
        // TLS 1.2 suites (1.3's are all forward-secret AEAD already): only ECDHE key exchange with AES-GCM or
        // ChaCha20-Poly1305, so static-RSA key exchange (AES128-SHA) and CBC suites are refused in the handshake.
        guard SSL_CTX_set_cipher_list(context, TLSConfiguration.tls12CipherList) == 1 else {
            throw TLSError("cannot set the TLS 1.2 cipher list: \(OpenSSLErrors.last())")
        }
        guard SSL_CTX_set_ciphersuites(context, TLSConfiguration.tls13CipherSuites) == 1 else {
            throw TLSError("cannot set the TLS 1.3 cipher suites: \(OpenSSLErrors.last())")
        }
        if configuration.role == .server { CLonglinkOpenSSL_CTX_prefer_server_ciphers(context) }
        CLonglinkOpenSSL_CTX_set_nonblocking_modes(context)
        if let certificate = configuration.certificateFile {
            guard let key = configuration.privateKeyFile else { throw TLSError("certificate \(certificate) given without a key") }
            guard SSL_CTX_use_certificate_chain_file(context, certificate) == 1 else {
                throw TLSError("cannot load certificate \(certificate): \(OpenSSLErrors.last())")
            }
            guard SSL_CTX_use_PrivateKey_file(context, key, SSL_FILETYPE_PEM) == 1 else {
                throw TLSError("cannot load private key \(key): \(OpenSSLErrors.last())")
            }
            guard SSL_CTX_check_private_key(context) == 1 else {
                throw TLSError("private key \(key) does not match certificate \(certificate)")
            }
        } else if configuration.role == .server {
            throw TLSError("a TLS server needs a certificate and a private key")
        }
        switch configuration.role {
        case .server:
            let id: [UInt8] = Array("longlink".utf8)
            _ = SSL_CTX_set_session_id_context(context, id, UInt32(id.count))
            if let ca = configuration.clientCAFile {
                guard SSL_CTX_load_verify_locations(context, ca, nil) == 1, let names = SSL_load_client_CA_file(ca) else {
                    throw TLSError("cannot load client CA file \(ca): \(OpenSSLErrors.last())")
                }
                SSL_CTX_set_client_CA_list(context, names)
                SSL_CTX_set_verify(context, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nil)
            }
            try TicketKeys.install(configuration.sessionTickets, on: context, previous: previous?.context)
        case .client:
            if resumesSessions {
                guard CLonglinkOpenSSL_CTX_enable_client_sessions(context) == 1 else {
                    throw TLSError("cannot keep TLS sessions: \(OpenSSLErrors.last())")
                }
            } else {
                CLonglinkOpenSSL_CTX_disable_session_cache(context)
            }
            switch configuration.trust {
            case .system:
                guard SSL_CTX_set_default_verify_paths(context) == 1 else {
                    throw TLSError("cannot load the system CA store: \(OpenSSLErrors.last())")
                }
                SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
            case .caFile(let ca):
                guard SSL_CTX_load_verify_locations(context, ca, nil) == 1 else {
                    throw TLSError("cannot load CA file \(ca): \(OpenSSLErrors.last())")
                }
                SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
            case .caPEM(let bytes):
                guard CLonglinkOpenSSL_CTX_add_trusted_pem(context, bytes, bytes.count) > 0 else {
                    throw TLSError("the CA bytes hold no PEM certificate")
                }
                SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
            case .insecureNoVerification:
                SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nil)
            }
        }
    }

    deinit { SSL_CTX_free(context) }
}

/// OpenSSL's per-thread error queue, read and cleared.
enum OpenSSLErrors {
    /// The most recent error's text ("" when none), clearing the queue.
    static func last() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        CLonglinkOpenSSL_last_error(&buffer, buffer.count)
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return text.isEmpty ? "unknown OpenSSL error" : text
    }
}
