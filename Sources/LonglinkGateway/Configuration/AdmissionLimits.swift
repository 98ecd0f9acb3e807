public import LonglinkLoop

/// Limits applied when a connection arrives, before any protocol work is spent on it. The per-connection limits
/// (handshake timeout, frame size, subscriptions, publish rate) live in `PeerSettings`.
public struct AdmissionLimits: Sendable, Hashable {
    /// New connections per second for the whole process (token bucket); 0 = unlimited. Excess connections get
    /// `connection_rate_limited` with a retry hint and are closed.
    public var connectionsPerSecond: Int
    /// Connections that may arrive at once above the rate (the bucket's size).
    public var connectionBurst: Int
    /// Open connections per source IP address; 0 = unlimited. Mobile carriers put many users behind one address
    /// (CGNAT), so keep it generous.
    public var maxConnectionsPerAddress: Int
    /// Transport handshake steps (TLS key exchanges) each loop runs per iteration; the rest wait for the next
    /// iteration, so a flood of handshakes cannot starve established connections on the same loop.
    public var handshakesPerIteration: Int

    /// No connection rate or per-address limit (the handshake budget stays): what `GatewayConfiguration` uses
    /// unless told otherwise, so embedded gateways, tests and benchmarks opening thousands of loopback
    /// connections are not throttled. `longlink serve` applies the documented limits.
    public static let unlimited = AdmissionLimits(connectionsPerSecond: 0, maxConnectionsPerAddress: 0)

    /// Creates limits; the defaults are `serve`'s, documented in the README.
    public init(
        connectionsPerSecond: Int = 1_000,
        connectionBurst: Int = 2_000,
        maxConnectionsPerAddress: Int = 1_000,
        handshakesPerIteration: Int = 32
    ) {
        self.connectionsPerSecond = connectionsPerSecond
        self.connectionBurst = connectionBurst
        self.maxConnectionsPerAddress = maxConnectionsPerAddress
        self.handshakesPerIteration = handshakesPerIteration
    }
}

/// One more listening address with its own transport.
public struct GatewayListener: Sendable {
    /// Address to listen on.
    public var host: String
    /// Port (0 = any free port; read `Gateway.port(ofListener:)` after start).
    public var port: Int
    /// How its connections are wrapped (e.g. `TLSTransportFactory`).
    public var transport: any TransportFactory

    /// Creates a listener description.
    public init(host: String, port: Int, transport: any TransportFactory) {
        self.host = host
        self.port = port
        self.transport = transport
    }
}
