import LonglinkClient

/// The TLS options every client command shares (`--tls`, `--ca-file`, `--insecure`, `--client-cert`, `--pin-sha256`,
/// ...) and the client library's TLS settings they describe (one TLS path for apps and the CLI).
enum ClientTLSOptions {
    static let specs: [OptionSpec] = [
        OptionSpec("tls", kind: .flag, help: "connect over TLS (trusting the system CA store unless --ca-file)"),
        OptionSpec("ca-file", valueName: "FILE", help: "trust only CAs in this PEM file (implies --tls)"),
        OptionSpec(
            "insecure",
            kind: .flag,
            help: "TLS without certificate checks (testing only; prints a warning)",
            configurable: false
        ),
        OptionSpec("server-name", valueName: "NAME", help: "name the server certificate must match (default: the --server host)"),
        OptionSpec("client-cert", valueName: "FILE", help: "client certificate (PEM) for servers that require one"),
        OptionSpec("client-key", valueName: "FILE", help: "private key for --client-cert"),
        OptionSpec(
            "pin-sha256",
            valueName: "HEX[,HEX]",
            help: "accept only these server public keys: SHA-256 of the SPKI in hex (implies --tls)"
        ),
    ]

    /// The TLS settings the options describe; nil for plain TCP.
    static func settings(_ options: ResolvedOptions, io: CommandIO?) throws -> ClientTLS? {
        func text(_ name: String) -> String? { options.string(name).flatMap { $0.isEmpty ? nil : $0 } }
        let insecure = options.flag("insecure")
        let caFile = text("ca-file")
        let pins = text("pin-sha256")
        guard options.flag("tls") || caFile != nil || insecure || text("client-cert") != nil || pins != nil else { return nil }
        if insecure && caFile != nil { throw CommandLineError("--insecure and --ca-file contradict each other; choose one") }
        if insecure && pins != nil { throw CommandLineError("--insecure and --pin-sha256 contradict each other; choose one") }
        if (text("client-cert") == nil) != (text("client-key") == nil) {
            throw CommandLineError("--client-cert and --client-key go together")
        }
        var pinned: [PublicKeyPin] = []
        for hex in pins?.split(separator: ",") ?? [] {
            guard let pin = PublicKeyPin(hex: String(hex)) else {
                throw CommandLineError("--pin-sha256 takes SHA-256 digests of 64 hex digits, not '\(hex)'")
            }
            pinned.append(pin)
        }
        if insecure {
            io?.err(
                "WARNING: --insecure: the server's certificate is NOT verified; anyone on the network path can read and "
                    + "change this connection. Use --ca-file for a private CA."
            )
        }
        let trust: ClientTLS.Trust = insecure ? .insecureNoVerification : caFile.map { .caFile($0) } ?? .system
        let certificate = text("client-cert").map { ClientCertificate(certificateFile: $0, privateKeyFile: text("client-key") ?? "") }
        return ClientTLS(trust: trust, clientCertificate: certificate, pinnedPublicKeys: pinned)
    }
}
