import LonglinkCore
public import LonglinkLoop

/// How a `LonglinkClient` connects and behaves.
public struct ClientConfiguration: Sendable {
    /// Gateway host (numeric address or name).
    public var host: String
    /// Gateway port.
    public var port: Int
    /// Connection token (JWT); empty for a development server. With a `tokenProvider`, only its first guess.
    public var token: String
    /// Where fresh tokens come from: asked before every connection attempt, when the server warns that the token
    /// expires soon, and once after a refused token (see `TokenProvider`). Nil: `token` (and `updateToken`) only.
    public var tokenProvider: TokenProvider?
    /// Client software name reported to the server.
    public var clientName: String
    /// Client software version reported to the server.
    public var clientVersion: String
    /// Foreground or background: reconnect and probe timings follow it.
    public var applicationState: ApplicationState
    /// Time allowed from starting a connection attempt to `connected`.
    public var connectTimeout: Duration
    /// How long `publish` keeps retrying (same idempotency key) before giving up.
    public var publishTimeout: Duration
    /// Largest frame accepted from the server.
    public var maxFrameSize: Int
    /// Whether pushes are acked (publishers' delivery receipts rely on it).
    public var sendsAcks: Bool
    /// Whether to reconnect after the connection is lost.
    public var reconnects: Bool
    /// TLS settings (trust, client certificate, public-key pins); nil connects in plain TCP through `transport`.
    public var tls: ClientTLS?
    /// How the socket is wrapped when `tls` is nil: plain TCP by default (or a custom transport).
    public var transport: any TransportFactory
    /// The name the server's certificate must match (and SNI) with `tls`; nil uses `host`.
    public var serverName: String?
    /// What the client's event-loop threads sleep in: `.epoll` by default on Linux, `.poll` (POSIX only: what an
    /// iOS or Android build uses) everywhere else or when asked.
    public var selectorBackend: SelectorBackend
    /// Smart heartbeat: learn the longest ping interval the network keeps alive (within the server's bounds) and
    /// remember it per network; nil uses the server's interval.
    public var heartbeat: HeartbeatLearning?

    public init(
        host: String = "127.0.0.1",
        port: Int = 7070,
        token: String = "",
        tokenProvider: TokenProvider? = nil,
        clientName: String = "longlink-swift",
        clientVersion: String = "0.1.0",
        applicationState: ApplicationState = .foreground,
        connectTimeout: Duration = .seconds(10),
        publishTimeout: Duration = .seconds(10),
        maxFrameSize: Int = 1 << 20,
        sendsAcks: Bool = true,
        reconnects: Bool = true,
        tls: ClientTLS? = nil,
        transport: any TransportFactory = PlainTransportFactory(),
        serverName: String? = nil,
        selectorBackend: SelectorBackend = .platformDefault,
        heartbeat: HeartbeatLearning? = nil
    ) {
        self.selectorBackend = selectorBackend
        self.heartbeat = heartbeat
        self.tls = tls
        self.transport = transport
        self.serverName = serverName
        self.host = host
        self.port = port
        self.token = token
        self.tokenProvider = tokenProvider
        self.clientName = clientName
        self.clientVersion = clientVersion
        self.applicationState = applicationState
        self.connectTimeout = connectTimeout
        self.publishTimeout = publishTimeout
        self.maxFrameSize = maxFrameSize
        self.sendsAcks = sendsAcks
        self.reconnects = reconnects
    }
}
