import LonglinkCore
import LonglinkGateway
import LonglinkLoop
import LonglinkOpenSSL
import LonglinkWebSocket
public import LonglinkServer

/// The WebSocket half of `serve`'s configuration: `ws` and `wss` listeners for browsers, their path and the
/// page origins they admit. `wss` is the TLS transport with the WebSocket transport inside it, so it uses the
/// TLS certificate options (`--tls-cert`, `--tls-key`, `--tls-client-ca`) and reloads with them on SIGHUP.
public struct ServeWebSocketConfiguration: Sendable {
    /// Serve options about WebSocket (appended to `ServeOptions.specs`).
    static let specs: [OptionSpec] = [
        OptionSpec("ws-listen", valueName: "HOST:PORT", help: "WebSocket listener for browsers (ws://HOST:PORT/PATH)"),
        OptionSpec("wss-listen", valueName: "HOST:PORT", help: "WebSocket-over-TLS listener (needs --tls-cert and --tls-key)"),
        OptionSpec("ws-path", default: "/longlink", valueName: "PATH", help: "path of the WebSocket endpoint"),
        OptionSpec(
            "ws-allowed-origins",
            valueName: "LIST",
            help: "page origins admitted besides same-origin pages, comma-separated ('*' = any)"
        ),
    ]

    /// The `ws` listener, if any.
    public var listen: HostPort?
    /// The `wss` listener, if any.
    public var secureListen: HostPort?
    /// The endpoint's path.
    public var path: String
    /// Origins admitted besides same-origin pages (and the operations listener's pages).
    public var allowedOrigins: [String]

    /// Validates the WebSocket options.
    public init(options: ResolvedOptions) throws(CommandLineError) {
        func text(_ name: String) -> String? { options.string(name).flatMap { $0.isEmpty ? nil : $0 } }
        listen = try text("ws-listen").map { (value) throws(CommandLineError) in try HostPort(parsing: value, option: "ws-listen") }
        secureListen = try text("wss-listen").map { (value) throws(CommandLineError) in try HostPort(parsing: value, option: "wss-listen") }
        path = text("ws-path") ?? "/longlink"
        guard path.hasPrefix("/"), !path.contains(" "), !path.contains("?") else {
            throw CommandLineError("--ws-path must be a path starting with '/', got '\(path)'")
        }
        allowedOrigins = (text("ws-allowed-origins") ?? "").split(separator: ",").map { $0.trimmingCharacters(in: " ") }.filter { !$0.isEmpty }
        for origin in allowedOrigins where origin != "*" && !(origin.hasPrefix("http://") || origin.hasPrefix("https://")) {
            throw CommandLineError("--ws-allowed-origins takes origins like https://app.example.com (or '*'), got '\(origin)'")
        }
    }

    /// The listeners to add to the gateway, and the origin policy they share (the operations listener's port is
    /// trusted once it is bound).
    func listeners(tls: TLSContext?, maxFrameSize: Int) -> (listeners: [GatewayListener], origins: WebSocketOriginPolicy) {
        let origins = WebSocketOriginPolicy(allowed: allowedOrigins)
        var listeners: [GatewayListener] = []
        func endpoint(secure: Bool) -> WebSocketEndpoint {
            WebSocketEndpoint(
                policy: WebSocketUpgradePolicy(path: path, origins: origins, secure: secure),
                maxMessageSize: WebSocketEndpoint.messageLimit(forMaxFrameSize: maxFrameSize)
            )
        }
        if let listen {
            let factory = WebSocketTransportFactory(inner: PlainTransportFactory(), endpoint: endpoint(secure: false))
            listeners.append(GatewayListener(host: listen.host, port: Int(listen.port), transport: factory))
        }
        if let secureListen, let tls {
            let factory = WebSocketTransportFactory(inner: TLSTransportFactory(context: tls), endpoint: endpoint(secure: true))
            listeners.append(GatewayListener(host: secureListen.host, port: Int(secureListen.port), transport: factory))
        }
        return (listeners, origins)
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: Character) -> String {
        var slice = self
        while slice.first == set { slice = slice.dropFirst() }
        while slice.last == set { slice = slice.dropLast() }
        return String(slice)
    }
}
