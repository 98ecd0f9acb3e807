public import LonglinkCore
public import LonglinkLoop

/// How a `LonglinkClient` connects and behaves.
public struct ClientConfiguration: Sendable {
    /// Gateway host (numeric address or name).
    public var host: String
    /// Gateway port.
    public var port: Int
    /// Connection token (JWT); empty for a development server.
    public var token: String
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
    /// How the socket is wrapped: plain TCP by default, or a `TLSTransportFactory` (LonglinkOpenSSL) for TLS.
    public var transport: any TransportFactory
    /// The name the server's certificate must match (and SNI); nil uses `host`.
    public var serverName: String?

    public init(
        host: String = "127.0.0.1",
        port: Int = 7070,
        token: String = "",
        clientName: String = "longlink-swift",
        clientVersion: String = "0.1.0",
        applicationState: ApplicationState = .foreground,
        connectTimeout: Duration = .seconds(10),
        publishTimeout: Duration = .seconds(10),
        maxFrameSize: Int = 1 << 20,
        sendsAcks: Bool = true,
        reconnects: Bool = true,
        transport: any TransportFactory = PlainTransportFactory(),
        serverName: String? = nil
    ) {
        self.transport = transport
        self.serverName = serverName
        self.host = host
        self.port = port
        self.token = token
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

/// The client's connection, as the app may show it.
public enum ConnectionState: Sendable, Hashable, CustomStringConvertible {
    /// Not started.
    case idle
    /// Attempt `attempt` (0-based) is in progress.
    case connecting(attempt: Int)
    /// Connected; carries the server's session parameters.
    case connected(Connected)
    /// Waiting `delay` before attempt `attempt`.
    case waitingToReconnect(attempt: Int, delay: Duration)
    /// Closed by the app, or by the server with a do-not-reconnect code.
    case closed(Disconnect?)

    public var description: String {
        switch self {
        case .idle: "idle"
        case .connecting(let attempt): "connecting (attempt \(attempt + 1))"
        case .connected(let info): "connected to \(info.nodeID) as \(info.clientID)"
        case .waitingToReconnect(let attempt, let delay): "reconnecting in \(delay) (attempt \(attempt + 1))"
        case .closed(let reason): reason.map { "closed: \($0)" } ?? "closed"
        }
    }

    /// Whether the client is connected.
    public var isConnected: Bool {
        if case .connected = self { true } else { false }
    }
}

/// Why a client call failed.
public enum ClientError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The server refused the request (typed error with its numbered code).
    case refused(ErrorFrame)
    /// No answer within the timeout (the change may or may not have been applied; retry with the same key).
    case timeout
    /// The client was closed.
    case closed
    /// The server closed the session for good.
    case disconnected(Disconnect)

    public var description: String {
        switch self {
        case .refused(let error): "refused: \(error)"
        case .timeout: "timed out waiting for the gateway"
        case .closed: "client closed"
        case .disconnected(let disconnect): "disconnected: \(disconnect)"
        }
    }
}

/// A publish the Store accepted.
public struct PublishReceipt: Sendable, Hashable {
    /// Where the record sits in the order's history.
    public var position: StreamPosition
    /// When the Store accepted it (ms since the Unix epoch).
    public var timestampMillis: UInt64
    /// True when the idempotency key had been applied before (a retry); nothing new was stored.
    public var deduplicated: Bool
    /// The idempotency key used.
    public var idempotencyKey: String
}
