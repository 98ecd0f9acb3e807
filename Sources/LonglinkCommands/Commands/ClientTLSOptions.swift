import LonglinkLoop
import LonglinkOpenSSL

/// The TLS options every client command shares (`--tls`, `--ca-file`, `--insecure`, `--client-cert`, ...) and the transport
/// factory they describe.
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
    ]

    /// Plain TCP, or TLS as the options say.
    static func transport(_ options: ResolvedOptions, io: CommandIO?) throws -> any TransportFactory {
        func text(_ name: String) -> String? { options.string(name).flatMap { $0.isEmpty ? nil : $0 } }
        let insecure = options.flag("insecure")
        let caFile = text("ca-file")
        guard options.flag("tls") || caFile != nil || insecure || text("client-cert") != nil else { return PlainTransportFactory() }
        if insecure && caFile != nil { throw CommandLineError("--insecure and --ca-file contradict each other; choose one") }
        if (text("client-cert") == nil) != (text("client-key") == nil) {
            throw CommandLineError("--client-cert and --client-key go together")
        }
        if insecure {
            io?.err(
                "WARNING: --insecure: the server's certificate is NOT verified; anyone on the network path can read and "
                    + "change this connection. Use --ca-file for a private CA."
            )
        }
        let trust: TLSConfiguration.Trust = insecure ? .insecureNoVerification : caFile.map { .caFile($0) } ?? .system
        do {
            let context = try TLSContext(.client(trust: trust, certificateFile: text("client-cert"), privateKeyFile: text("client-key")))
            return TLSTransportFactory(context: context)
        } catch {
            throw CommandFailure("\(error)", exitCode: ClientExitCode.usage)
        }
    }
}
