/// TLS for a client connection (`ClientConfiguration.tls`), without the app importing OpenSSL: which CAs to
/// trust, an optional client certificate, and optional public-key pins. The name the server's certificate must
/// match (and SNI) is `ClientConfiguration.serverName`, or the host.
public struct ClientTLS: Sendable, Hashable {
    /// Which certificate authorities the server's certificate must chain to.
    public enum Trust: Sendable, Hashable {
        /// The operating system's CA store.
        case system
        /// Only the CAs in this PEM file.
        case caFile(String)
        /// Only the CAs in these PEM bytes (a CA bundled with the app).
        case caPEM([UInt8])
        /// No certificate check at all: anyone on the path can read the connection. Tests and local experiments only.
        case insecureNoVerification
    }

    /// The highest TLS version the client offers.
    public enum MaximumVersion: Sendable, Hashable {
        /// TLS 1.3 (the default): a resumed handshake still makes a fresh key exchange (psk_dhe_ke), so even a
        /// leaked ticket key does not decrypt a resumed session.
        case tls13
        /// TLS 1.2 only: a resumed handshake is an abbreviated one without a key exchange, about four times
        /// cheaper for the server than a TLS 1.3 resumption. What it gives up: a resumed session's keys come from
        /// the ticket alone, so whoever obtains the server's ticket key (until it rotates) can decrypt recorded
        /// resumed sessions; a full TLS 1.2 handshake also sends the server certificate unencrypted. For fleets
        /// that reconnect all at once after a node restart; the server accepts either without configuration.
        case tls12
    }

    /// Which CAs are trusted.
    public var trust: Trust
    /// A client certificate for servers that require one.
    public var clientCertificate: ClientCertificate?
    /// Accepted server public keys; empty accepts any key the trusted CAs certified. With pins, a server whose key
    /// is not among them fails with `TLSFailureCause.pinMismatch` (after the usual certificate checks).
    public var pinnedPublicKeys: [PublicKeyPin]
    /// Keep the session ticket the server gives and offer it when reconnecting (on by default): a resumed
    /// handshake skips the certificate exchange and costs the server a fraction of a full one. A resumed
    /// connection trusts the check made on the full handshake it came from (see `LonglinkClient.tlsHandshakes`).
    public var resumesSessions: Bool
    /// The highest TLS version offered (`.tls13` by default; `.tls12` for cheaper resumptions, see its caveats).
    public var maximumVersion: MaximumVersion

    /// Creates TLS settings (the system CA store, no client certificate, no pins, session resumption by default).
    public init(
        trust: Trust = .system,
        clientCertificate: ClientCertificate? = nil,
        pinnedPublicKeys: [PublicKeyPin] = [],
        resumesSessions: Bool = true,
        maximumVersion: MaximumVersion = .tls13
    ) {
        self.maximumVersion = maximumVersion
        self.trust = trust
        self.clientCertificate = clientCertificate
        self.pinnedPublicKeys = pinnedPublicKeys
        self.resumesSessions = resumesSessions
    }
}

/// A client certificate chain and its private key, as PEM files.
public struct ClientCertificate: Sendable, Hashable {
    /// The PEM certificate (chain) file.
    public var certificateFile: String
    /// The PEM private key file.
    public var privateKeyFile: String

    /// Creates the pair.
    public init(certificateFile: String, privateKeyFile: String) {
        self.certificateFile = certificateFile
        self.privateKeyFile = privateKeyFile
    }
}

/// A pinned server public key: the SHA-256 of its DER SubjectPublicKeyInfo, the value mobile apps pin
/// (`openssl x509 -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256`).
public struct PublicKeyPin: Sendable, Hashable, CustomStringConvertible {
    /// The 32-byte digest.
    public let sha256: [UInt8]

    /// A pin from the 32 digest bytes; nil for another length.
    public init?(sha256: [UInt8]) {
        guard sha256.count == 32 else { return nil }
        self.sha256 = sha256
    }

    /// A pin from 64 hexadecimal digits (colons allowed, as `openssl dgst -c` prints); nil otherwise.
    public init?(hex: String) {
        let digits = hex.filter { $0 != ":" }.utf8.map { byte -> UInt8? in
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        guard digits.count == 64, !digits.contains(nil) else { return nil }
        let values = digits.compactMap { $0 }
        self.init(sha256: stride(from: 0, to: 64, by: 2).map { values[$0] << 4 | values[$0 + 1] })
    }

    /// The digest in hexadecimal.
    public var description: String {
        let digits = Array("0123456789abcdef")
        return "sha256:" + String(sha256.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
    }
}

/// The TLS settings could not be used (an unreadable CA or certificate file, a key not matching its certificate).
public struct ClientTLSError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong, in the TLS library's words.
    public var reason: String

    /// Creates an error.
    public init(_ reason: String) { self.reason = reason }

    public var description: String { "TLS: \(reason)" }
}
