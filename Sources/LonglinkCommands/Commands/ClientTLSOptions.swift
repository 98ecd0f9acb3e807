import LonglinkLoop
import LonglinkOpenSSL

/// The TLS options every client command shares (`--tls`, `--ca-file`, `--insecure`, ...) and the transport
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
        OptionSpec("cert", valueName: "FILE", help: "client certificate (PEM) for servers that require one"),
        OptionSpec("key", valueName: "FILE", help: "private key for --cert"),
    ]

    /// Plain TCP, or TLS as the options say.
    static func transport(_ options: ResolvedOptions, io: CommandIO?) throws -> any TransportFactory {
        func text(_ name: String) -> String? { options.string(name).flatMap { $0.isEmpty ? nil : $0 } }
        let insecure = options.flag("insecure")
        let caFile = text("ca-file")
        guard options.flag("tls") || caFile != nil || insecure || text("cert") != nil else { return PlainTransportFactory() }
        if insecure && caFile != nil { throw CommandLineError("--insecure and --ca-file contradict each other; choose one") }
        if (text("cert") == nil) != (text("key") == nil) { throw CommandLineError("--cert and --key go together") }
        if insecure {
            io?.err(
                "WARNING: --insecure: the server's certificate is NOT verified; anyone on the network path can read and "
                    + "change this connection. Use --ca-file for a private CA."
            )
        }
        let trust: TLSConfiguration.Trust = insecure ? .insecureNoVerification : caFile.map { .caFile($0) } ?? .system
        do {
            let context = try TLSContext(.client(trust: trust, certificateFile: text("cert"), privateKeyFile: text("key")))
            return TLSTransportFactory(context: context)
        } catch {
            throw CommandFailure("\(error)", exitCode: 2)
        }
    }
}
