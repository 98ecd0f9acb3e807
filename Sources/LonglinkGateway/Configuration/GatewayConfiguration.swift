import LonglinkCore
public import LonglinkLoop

/// Everything the gateway needs to know to run, as plain values. `longlink serve` builds it from the resolved
/// options; tests build it directly with small timings.
public struct GatewayConfiguration: Sendable {
    /// What happens to a subscriber whose outbound queue passes `outboundLimit`.
    public enum SlowConsumerPolicy: String, Sendable, Hashable {
        /// Send the numbered `slow` disconnect and close.
        case disconnect
        /// Keep only the latest record per route and mark the next push `skippedBefore`.
        case coalesce
    }

    /// Address to listen on (numeric host or `localhost`).
    public var host: String
    /// Port (0 = any free port; read `Gateway.port` after start).
    public var port: Int
    /// Event loops (threads); each has its own SO_REUSEPORT listener.
    public var loopCount: Int
    /// Per-connection protocol timings and limits.
    public var peer: PeerSettings
    /// Connections per process; beyond it new connections get `too_many_connections` and are closed.
    public var maxConnections: Int
    /// Queued outbound bytes per connection, every frame kind counted: past it the connection is cut with `slow`
    /// (under `coalesce`, pushes are held back from half of it on). Reads pause from half of it to a quarter.
    public var outboundLimit: Int
    /// The slow-consumer policy.
    public var slowPolicy: SlowConsumerPolicy
    /// The period over which a drain disconnects clients (and the ceiling of their reconnect delay).
    public var drainPeriod: Duration
    /// Bytes read per readiness event before moving on to other connections (fairness, level-triggered).
    public var readBudget: Int
    /// How the main listener's connections are wrapped (plain TCP by default).
    public var transport: any TransportFactory
    /// More listeners beside the main one, each with its own transport (e.g. a TLS port for apps while the main
    /// plain port serves backends on localhost).
    public var additionalListeners: [GatewayListener]
    /// Admission control at accept time: connection rate, connections per address, handshake budget.
    public var admission: AdmissionLimits
    /// `SO_SNDBUF` for accepted sockets; nil keeps the kernel's auto-tuning. A small value makes the outbound
    /// limit (and so the slow-consumer policy) bite sooner, at the cost of throughput to fast readers.
    public var socketSendBuffer: Int?
    /// How each loop sends its connections' pending bytes before it sleeps: through a send ring, one system call
    /// for all of them (the default), or one `send` per connection.
    public var flush: FlushMode

    public init(
        host: String = "127.0.0.1",
        port: Int = 7070,
        loopCount: Int = 2,
        peer: PeerSettings,
        maxConnections: Int = 19_000,
        outboundLimit: Int = 1 << 20,
        slowPolicy: SlowConsumerPolicy = .disconnect,
        drainPeriod: Duration = .seconds(10),
        readBudget: Int = 256 * 1024,
        socketSendBuffer: Int? = nil,
        transport: any TransportFactory = PlainTransportFactory(),
        additionalListeners: [GatewayListener] = [],
        admission: AdmissionLimits = .unlimited,
        flush: FlushMode = .ring
    ) {
        self.flush = flush
        self.transport = transport
        self.additionalListeners = additionalListeners
        self.admission = admission
        self.socketSendBuffer = socketSendBuffer
        self.host = host
        self.port = port
        self.loopCount = loopCount
        self.peer = peer
        self.maxConnections = maxConnections
        self.outboundLimit = outboundLimit
        self.slowPolicy = slowPolicy
        self.drainPeriod = drainPeriod
        self.readBudget = readBudget
    }

    /// The interval of each loop's housekeeping tick (heartbeats, handshake and token deadlines): a quarter of
    /// the shortest timing, between 10 ms and 1 s.
    public var tickInterval: Duration {
        let shortestPing = peer.acceptsPingIntervals ? min(peer.pingIntervalMillis, peer.minPingIntervalMillis) : peer.pingIntervalMillis
        let shortest = min(shortestPing, peer.pongTimeoutMillis, peer.handshakeTimeoutMillis)
        return .milliseconds(Int64(min(1_000, max(10, shortest / 4))))
    }
}
