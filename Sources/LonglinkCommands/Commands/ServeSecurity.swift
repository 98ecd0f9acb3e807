import LonglinkCore
public import LonglinkGateway
import LonglinkLoop
import LonglinkOpenSSL
public import LonglinkServer

/// The security half of `serve`'s configuration: TLS listener, token verification and admission limits, with
/// their options. Parsed with the rest of `ServeConfiguration`; turned into live objects by `prepare`.
public struct ServeSecurityConfiguration: Sendable {
    /// Serve options about TLS, tokens and admission (appended to `ServeOptions.specs`).
    static let specs: [OptionSpec] = [
        OptionSpec("tls-listen", valueName: "HOST:PORT", help: "TLS listener beside the plain one (needs --tls-cert and --tls-key)"),
        OptionSpec("tls-cert", valueName: "FILE", help: "PEM certificate chain for the TLS listener (reloaded on SIGHUP)"),
        OptionSpec("tls-key", valueName: "FILE", help: "PEM private key for --tls-cert"),
        OptionSpec("tls-client-ca", valueName: "FILE", help: "require client certificates issued by the CAs in this PEM file"),
        OptionSpec(
            "tls-ticket-keys",
            valueName: "FILE|off",
            help: "TLS session ticket keys shared by every node (1-8 keys of 80 bytes: openssl rand 80 > FILE; reloaded "
                + "on SIGHUP), or off; default: random keys per process, rotated every 12 h"
        ),
        OptionSpec("secret-file", valueName: "FILE", help: "file holding the HS256 token secret (or LONGLINK_SECRET)"),
        OptionSpec(
            "insecure-dev",
            kind: .flag,
            help: "no token checks: every client is admin (development only; announced loudly)",
            configurable: false
        ),
        OptionSpec("token-issuer", valueName: "ISS", help: "tokens must carry this iss claim"),
        OptionSpec("token-audience", valueName: "AUD", help: "tokens must carry this aud claim"),
        OptionSpec("connection-rate", default: "1000", valueName: "N", help: "new connections per second per process; 0 = unlimited"),
        OptionSpec("connection-burst", default: "2000", valueName: "N", help: "new connections accepted at once above the rate"),
        OptionSpec(
            "max-connections-per-address",
            default: "1000",
            valueName: "N",
            help: "open connections per source IP; 0 = unlimited"
        ),
        OptionSpec("publish-rate", default: "1000", valueName: "N", help: "publishes per second per connection; 0 = unlimited"),
        OptionSpec("publish-burst", default: "2000", valueName: "N", help: "publishes accepted at once above the rate"),
        OptionSpec("handshake-budget", default: "32", valueName: "N", help: "TLS handshake steps per loop iteration"),
    ]

    /// The TLS listener's address, if any.
    public var tlsListen: HostPort?
    /// Whether a WebSocket-over-TLS listener (`--wss-listen`) uses the certificate too.
    public var secureWebSocket = false
    /// Certificate chain file.
    public var tlsCertificate: String?
    /// Private key file.
    public var tlsKey: String?
    /// Client CA file (client certificates required when set).
    public var tlsClientCA: String?
    /// How TLS session tickets are encrypted (`--tls-ticket-keys`).
    var sessionTickets: TLSConfiguration.SessionTickets = .default
    /// Token secret file.
    public var secretFile: String?
    /// Run without token checks.
    public var insecureDev: Bool
    /// Required `iss`.
    public var tokenIssuer: String?
    /// Required `aud`.
    public var tokenAudience: String?
    /// Admission limits.
    public var admission: AdmissionLimits
    /// Publishes per second per connection.
    public var publishRate: Int
    /// Publish burst per connection.
    public var publishBurst: Int

    /// Validates the security options.
    public init(options: ResolvedOptions) throws(CommandLineError) {
        func text(_ name: String) -> String? { options.string(name).flatMap { $0.isEmpty ? nil : $0 } }
        func count(_ name: String, _ fallback: Int) throws(CommandLineError) -> Int {
            let value = try options.int(name) ?? fallback
            guard value >= 0 else { throw CommandLineError("--\(name) must be zero or more, got \(value)") }
            return value
        }
        tlsListen = try text("tls-listen").map { (value) throws(CommandLineError) in try HostPort(parsing: value, option: "tls-listen") }
        tlsCertificate = text("tls-cert")
        tlsKey = text("tls-key")
        tlsClientCA = text("tls-client-ca")
        if tlsListen != nil && (tlsCertificate == nil || tlsKey == nil) {
            throw CommandLineError("--tls-listen needs --tls-cert FILE and --tls-key FILE")
        }
        secureWebSocket = text("wss-listen") != nil
        if secureWebSocket && (tlsCertificate == nil || tlsKey == nil) {
            throw CommandLineError("--wss-listen needs --tls-cert FILE and --tls-key FILE")
        }
        if tlsListen == nil && !secureWebSocket && (tlsCertificate != nil || tlsKey != nil || tlsClientCA != nil) {
            throw CommandLineError("--tls-cert, --tls-key and --tls-client-ca need --tls-listen HOST:PORT (or --wss-listen)")
        }
        switch text("tls-ticket-keys") {
        case nil: sessionTickets = .default
        case "off": sessionTickets = .disabled
        case let file?: sessionTickets = .keyFile(file)
        }
        secretFile = text("secret-file")
        insecureDev = options.flag("insecure-dev")
        if insecureDev && secretFile != nil {
            throw CommandLineError("--insecure-dev and --secret-file contradict each other; choose one")
        }
        tokenIssuer = text("token-issuer")
        tokenAudience = text("token-audience")
        admission = AdmissionLimits(
            connectionsPerSecond: try count("connection-rate", 1_000),
            connectionBurst: max(1, try count("connection-burst", 2_000)),
            maxConnectionsPerAddress: try count("max-connections-per-address", 1_000),
            handshakesPerIteration: max(1, try count("handshake-budget", 32))
        )
        publishRate = try count("publish-rate", 1_000)
        publishBurst = max(1, try count("publish-burst", 2_000))
    }

    /// The live objects: the authorizer, the TLS context (kept for SIGHUP reloads) and how tokens are minted
    /// for the copy-paste hints.
    struct Prepared {
        var authorizer: any Authorizer
        var tls: TLSContext?
        /// `--secret-file FILE` (or "" when the secret comes from the environment) for `longlink token` hints;
        /// nil in insecure development mode.
        var tokenHint: String?
    }

    /// Loads the secret and the certificate files. Refuses to run without a secret unless `--insecure-dev`.
    func prepare(environment: [String: String], io: CommandIO) throws -> Prepared {
        var tls: TLSContext?
        if tlsListen != nil || secureWebSocket, let tlsCertificate, let tlsKey {
            do {
                tls = try TLSContext(
                    .server(certificateFile: tlsCertificate, privateKeyFile: tlsKey, clientCAFile: tlsClientCA, sessionTickets: sessionTickets)
                )
            } catch {
                throw CommandFailure("\(error)", exitCode: 2)
            }
        }
        if insecureDev {
            return Prepared(authorizer: AllowAllAuthorizer(), tls: tls, tokenHint: nil)
        }
        guard let loaded = try TokenSecret.load(file: secretFile, environment: environment) else {
            throw CommandLineError(
                "no token secret: give --secret-file FILE (or set \(TokenSecret.environmentName)); "
                    + "for a local development server without authentication, pass --insecure-dev"
            )
        }
        if let warning = loaded.warning { io.err("warning: \(warning)") }
        do {
            let authorizer = try JWTAuthorizer(secret: loaded.secret, issuer: tokenIssuer, audience: tokenAudience)
            return Prepared(authorizer: authorizer, tls: tls, tokenHint: secretFile.map { "--secret-file \($0) " } ?? "")
        } catch {
            throw CommandFailure("\(loaded.source): \(error)", exitCode: 2)
        }
    }

    /// The TLS listener for the gateway configuration.
    func listeners(_ prepared: Prepared) -> [GatewayListener] {
        guard let tlsListen, let tls = prepared.tls else { return [] }
        return [GatewayListener(host: tlsListen.host, port: Int(tlsListen.port), transport: TLSTransportFactory(context: tls))]
    }
}
