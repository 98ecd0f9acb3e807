import LonglinkCore
import LonglinkGateway
import LonglinkOpenSSL
import LonglinkServer

/// What `serve` prints when it starts (listeners, auth mode, copy-paste commands with a token) and how it
/// answers SIGHUP.
enum ServeBanner {
    static func text(
        _ configuration: ServeConfiguration,
        running: RunningGateway,
        security: ServeSecurityConfiguration.Prepared,
        executable longlink: String = invocation()
    ) -> String {
        let host = configuration.listen.host
        let port = running.gateway.port
        var listeners = "\(host):\(port)"
        var tlsFlags = ""
        if let tls = configuration.security.tlsListen {
            let tlsPort = running.gateway.port(ofListener: 1)
            listeners += " and TLS on \(tls.host):\(tlsPort)"
            if security.tls?.configuration.clientCAFile == nil {
                tlsFlags = " (over TLS: --server \(tls.host):\(tlsPort) --tls --ca-file CA.pem)"
            }
        }
        let webSocket = webSocketURLs(configuration, running: running)
        if let ws = webSocket.ws { listeners += " and WebSocket on \(ws)" }
        if let wss = webSocket.wss { listeners += " and \(wss)" }
        var lines = [
            "longlink \(LonglinkVersion.current) serving on \(listeners) "
                + "(store \(configuration.store)\(configuration.shadowStore.map { ", shadow \($0)" } ?? ""), \(running.loopCount) loops)"
        ]
        guard let hint = security.tokenHint else {
            lines += [
                "",
                "************************************************************************************",
                "  WARNING: --insecure-dev: NO AUTHENTICATION. Every client is admitted as admin,",
                "  with or without a token. Never run this way outside a development machine.",
                "************************************************************************************",
                "",
                "Try, in another terminal:",
                "  \(longlink) subscribe order://taxi/8812 --server \(host):\(port)",
                "  \(longlink) publish --order 8812 --line taxi --state created --server \(host):\(port)",
            ]
            return lines.joined(separator: "\n")
        }
        lines += [
            "tokens: HS256 JWTs checked with the configured secret (mint them with `longlink token`)",
            "Try, in another terminal\(tlsFlags):",
            "  LONGLINK_TOKEN=$(\(longlink) token \(hint)--sub rider-1 --routes 'order://taxi/8812' --ttl 1h) \\",
            "    \(longlink) subscribe order://taxi/8812 --server \(host):\(port)",
            "  LONGLINK_TOKEN=$(\(longlink) token \(hint)--sub backend-1 --role publisher --routes 'order://taxi/*' --ttl 1h) \\",
            "    \(longlink) publish --order 8812 --line taxi --state created --server \(host):\(port)",
        ]
        return lines.joined(separator: "\n")
    }

    /// How the copy-paste lines call this executable: the path it was started by when that names a file
    /// (`.build/release/longlink` under `make run`, so the lines work from the directory serve was started in, like
    /// its relative `--secret-file`), else `longlink` (found on PATH, or a test runner calling the commands
    /// in-process). Quoted for the shell when needed.
    static func invocation(argv0: String? = CommandLine.arguments.first) -> String {
        guard let argv0, argv0.contains("/"),
            let name = argv0.split(separator: "/").last, name.hasPrefix("longlink")
        else { return "longlink" }
        return shellWord(argv0)
    }

    /// `text` as one shell word: unchanged when it holds only safe characters, else in single quotes.
    static func shellWord(_ text: String) -> String {
        let safe = text.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "/._-+:@%=,".unicodeScalars.contains(scalar))
        }
        if safe && !text.isEmpty { return text }
        var quoted = "'"
        for character in text { quoted += character == "'" ? #"'\''"# : String(character) }
        return quoted + "'"
    }

    /// The bound `ws://` and `wss://` endpoints (they follow the TLS listener among the additional listeners).
    static func webSocketURLs(_ configuration: ServeConfiguration, running: RunningGateway) -> (ws: String?, wss: String?) {
        var index = configuration.security.tlsListen == nil ? 1 : 2
        let path = configuration.webSocket.path
        var ws: String?
        var wss: String?
        if let listen = configuration.webSocket.listen {
            ws = "ws://\(HostPort(host: listen.host, port: UInt16(running.gateway.port(ofListener: index))))\(path)"
            index += 1
        }
        if let listen = configuration.webSocket.secureListen {
            wss = "wss://\(HostPort(host: listen.host, port: UInt16(running.gateway.port(ofListener: index))))\(path)"
        }
        return (ws, wss)
    }

    /// SIGHUP: re-reads the TLS certificate and key; new connections use them, open ones keep theirs.
    static func reload(_ tls: TLSContext?, logger: Logger) {
        guard let tls else {
            logger.notice("SIGHUP: nothing to reload (no TLS listener)")
            return
        }
        do {
            try tls.reload()
            logger.notice("SIGHUP: TLS certificate reloaded; new connections use it, open ones keep theirs")
        } catch {
            logger.error("SIGHUP: TLS reload failed, still serving the previous certificate: \(error)")
        }
    }
}
