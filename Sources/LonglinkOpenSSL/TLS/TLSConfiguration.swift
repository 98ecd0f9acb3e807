/// What a `TLSContext` is made from: the server's certificate and key (and, optionally, the CA that client
/// certificates must chain to), or a client's trust (system store, a CA file, or none at all for tests).
///
/// TLS 1.2 is the minimum on both sides; OpenSSL negotiates 1.3 whenever the peer offers it. With TLS 1.2 only
/// the forward-secret AEAD suites of `tls12CipherList` are offered and accepted.
public struct TLSConfiguration: Sendable, Hashable {
    /// Which side of the handshake the context is for.
    public enum Role: Sendable, Hashable {
        /// Accepts connections: presents `certificateFile`.
        case server
        /// Makes connections: checks the server's certificate against `trust`.
        case client
    }

    /// How a client decides to trust the server's certificate.
    public enum Trust: Sendable, Hashable {
        /// The operating system's CA store (`/etc/ssl/certs`).
        case system
        /// Only certificates chaining to the CAs in this PEM file.
        case caFile(String)
        /// Only certificates chaining to the CAs in these PEM bytes (a CA bundled with an app).
        case caPEM([UInt8])
        /// No verification at all (tests and local experiments; the CLI warns when it is used).
        case insecureNoVerification
    }

    /// The lowest protocol version accepted.
    public enum MinimumVersion: Sendable, Hashable {
        /// TLS 1.2 (the default; 1.3 is still preferred when both sides speak it).
        case tls12
        /// TLS 1.3 only.
        case tls13
    }

    /// The highest protocol version offered and accepted.
    public enum MaximumVersion: Sendable, Hashable {
        /// TLS 1.2 (for peers or tests that must not use 1.3).
        case tls12
        /// TLS 1.3 (the default).
        case tls13
    }

    /// Server only: how session tickets (TLS 1.2 tickets and TLS 1.3 PSK tickets) are encrypted, so a client that
    /// reconnects can resume its session with an abbreviated handshake: no certificate, no signature. The server
    /// keeps no per-session state either way (no session cache): everything is in the ticket the client holds.
    public enum SessionTickets: Sendable, Hashable {
        /// Random keys made when the context is built, a new one every `rotation` (the previous one still
        /// decrypts for one more period, so a ticket lives between one and two periods). The keys survive a
        /// `reload()` but not a restart, and each node has its own: after a restart, or on another node, clients
        /// make a full handshake.
        case rotating(every: Duration)
        /// Keys read from a file shared by every node (and kept across restarts): one or more 80-byte keys in
        /// nginx's `ssl_session_ticket_key` layout (`openssl rand 80 > ticket.key`). The first encrypts new
        /// tickets, all decrypt; rotate by putting a new key in front and reloading (SIGHUP).
        case keyFile(String)
        /// No tickets: every handshake is a full one.
        case disabled

        /// Twelve-hour random keys.
        public static let `default` = SessionTickets.rotating(every: .seconds(12 * 3600))
    }

    /// The TLS 1.2 cipher suites, in OpenSSL's syntax: ECDHE key exchange (forward secrecy) with an AEAD cipher
    /// (AES-GCM or ChaCha20-Poly1305), for ECDSA and RSA certificates. TLS 1.3 suites are all of that kind.
    public static let tls12CipherList = [
        "ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256",
        "ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-RSA-AES256-GCM-SHA384",
        "ECDHE-ECDSA-CHACHA20-POLY1305", "ECDHE-RSA-CHACHA20-POLY1305",
    ].joined(separator: ":")

    /// The TLS 1.3 suites, in order of preference (the server's order wins): AES-128-GCM with SHA-256 first.
    /// OpenSSL's default puts AES-256-GCM-SHA384 first, whose SHA-384 key schedule and transcript hashes cost a
    /// resumed handshake about 4 % more instructions on each side (BENCHMARKS.md, TLS resumption).
    public static let tls13CipherSuites = "TLS_AES_128_GCM_SHA256:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_256_GCM_SHA384"

    /// Server or client.
    public var role: Role
    /// PEM certificate chain (server: required; client: optional client certificate).
    public var certificateFile: String?
    /// PEM private key for `certificateFile`.
    public var privateKeyFile: String?
    /// Server only: when set, clients must present a certificate chaining to a CA in this PEM file.
    public var clientCAFile: String?
    /// Client only: how the server's certificate is checked.
    public var trust: Trust
    /// The lowest protocol version accepted.
    public var minimumVersion: MinimumVersion
    /// The highest protocol version offered and accepted.
    public var maximumVersion: MaximumVersion = .tls13
    /// Server only: how session tickets are encrypted (random rotating keys, a shared key file, or none).
    public var sessionTickets: SessionTickets = .default
    /// Client only: keep each connection's session ticket and offer it on the next connection to the same
    /// server name (`TLSTransportFactory.makeTransport(fd:role:sessionSlot:)`), so reconnects resume.
    public var resumesSessions: Bool = true
    /// Client only: SHA-256 digests (32 bytes each) of the server public keys (DER SubjectPublicKeyInfo) to accept,
    /// checked after the certificate verified; empty accepts any key. A mismatch fails with `pinMismatch`.
    public var pinnedPublicKeySHA256: [[UInt8]] = []

    /// A server configuration: certificate chain and key files, and optionally the CA file that client
    /// certificates must chain to (then a client without a valid certificate is refused in the handshake).
    public static func server(
        certificateFile: String,
        privateKeyFile: String,
        clientCAFile: String? = nil,
        minimumVersion: MinimumVersion = .tls12,
        maximumVersion: MaximumVersion = .tls13,
        sessionTickets: SessionTickets = .default
    ) -> TLSConfiguration {
        TLSConfiguration(
            role: .server,
            certificateFile: certificateFile,
            privateKeyFile: privateKeyFile,
            clientCAFile: clientCAFile,
            trust: .system,
            minimumVersion: minimumVersion,
            maximumVersion: maximumVersion,
            sessionTickets: sessionTickets
        )
    }

    /// A client configuration: how to trust the server, and optionally a client certificate and key.
    public static func client(
        trust: Trust = .system,
        certificateFile: String? = nil,
        privateKeyFile: String? = nil,
        pinnedPublicKeySHA256: [[UInt8]] = [],
        minimumVersion: MinimumVersion = .tls12,
        maximumVersion: MaximumVersion = .tls13,
        resumesSessions: Bool = true
    ) -> TLSConfiguration {
        TLSConfiguration(
            role: .client,
            certificateFile: certificateFile,
            privateKeyFile: privateKeyFile,
            clientCAFile: nil,
            trust: trust,
            minimumVersion: minimumVersion,
            maximumVersion: maximumVersion,
            resumesSessions: resumesSessions,
            pinnedPublicKeySHA256: pinnedPublicKeySHA256
        )
    }
}

/// A TLS context could not be built (unreadable file, key not matching the certificate, ...).
public struct TLSError: Error, Hashable, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// What failed, with OpenSSL's reason.
    public let reason: String

    /// Creates an error.
    public init(_ reason: String) { self.reason = reason }

    public var description: String { "TLS: \(reason)" }

    public var debugDescription: String { "TLSError: \(reason)" }
}
