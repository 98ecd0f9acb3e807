public import LonglinkCore

/// The timings and limits one connection is held to. Built once from the gateway configuration and shared
/// by every peer.
public struct PeerSettings: Sendable {
    /// This node's id, announced in `connected`.
    public var nodeID: String
    /// How often the server pings a connection whose client did not ask for another interval (ms).
    public var pingIntervalMillis: UInt64
    /// The shortest ping interval a client may ask for (ms); with `maxPingIntervalMillis` 0 the interval is fixed.
    public var minPingIntervalMillis: UInt64
    /// The longest ping interval a client may ask for (ms); 0: clients cannot choose (the interval is fixed).
    public var maxPingIntervalMillis: UInt64
    /// How long after a ping the server waits for any frame before closing (ms).
    public var pongTimeoutMillis: UInt64
    /// How long a new connection may take to send `connect` (ms).
    public var handshakeTimeoutMillis: UInt64
    /// Most subscriptions per connection.
    public var maxSubscriptions: Int
    /// Largest inbound frame.
    public var maxFrameSize: Int
    /// Most records sent back in one recovery; beyond that the client gets `recovered = false` and a snapshot.
    public var maxRecoveredRecords: Int
    /// Permission violations tolerated before the connection is closed with `forbidden`.
    public var maxViolations: Int
    /// How long before token expiry the client is warned (ms).
    public var tokenWarningLeadMillis: UInt64
    /// Publishes per second per connection (token bucket); 0 = unlimited (the default here; `serve` sets 1000).
    /// Excess publishes are refused with `rate_limited` on that request; the connection stays open.
    public var publishesPerSecond: Int
    /// Publishes a connection may send at once above the rate (the bucket's size).
    public var publishBurst: Int
    /// Route kinds served and whether they are open to external subscribers.
    public var routes: RouteRegistry

    public init(
        nodeID: String,
        pingIntervalMillis: UInt64 = 25_000,
        pongTimeoutMillis: UInt64 = 10_000,
        minPingIntervalMillis: UInt64 = 0,
        maxPingIntervalMillis: UInt64 = 0,
        handshakeTimeoutMillis: UInt64 = 10_000,
        maxSubscriptions: Int = 128,
        maxFrameSize: Int = 65_536,
        maxRecoveredRecords: Int = 1_000,
        maxViolations: Int = 5,
        tokenWarningLeadMillis: UInt64 = 60_000,
        routes: RouteRegistry = .standard,
        publishesPerSecond: Int = 0,
        publishBurst: Int = 2_000
    ) {
        self.publishesPerSecond = publishesPerSecond
        self.publishBurst = publishBurst
        self.nodeID = nodeID
        self.pingIntervalMillis = pingIntervalMillis
        self.pongTimeoutMillis = pongTimeoutMillis
        self.minPingIntervalMillis = minPingIntervalMillis
        self.maxPingIntervalMillis = maxPingIntervalMillis
        self.handshakeTimeoutMillis = handshakeTimeoutMillis
        self.maxSubscriptions = maxSubscriptions
        self.maxFrameSize = maxFrameSize
        self.maxRecoveredRecords = maxRecoveredRecords
        self.maxViolations = maxViolations
        self.tokenWarningLeadMillis = tokenWarningLeadMillis
        self.routes = routes
    }

    /// Whether clients may choose their ping interval (`connect.ping_interval_ms`, `heartbeat`).
    public var acceptsPingIntervals: Bool { maxPingIntervalMillis > 0 && minPingIntervalMillis <= maxPingIntervalMillis }

    /// The interval a connection gets for a client's proposal in `connect`: the proposal clamped to the bounds, or
    /// the default when the client made none or the interval is fixed.
    public func pingInterval(proposedMillis: UInt32) -> UInt64 {
        guard proposedMillis > 0, acceptsPingIntervals else { return pingIntervalMillis }
        return min(max(UInt64(proposedMillis), minPingIntervalMillis), maxPingIntervalMillis)
    }
}
