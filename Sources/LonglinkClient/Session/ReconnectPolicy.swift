/// How long to wait before reconnect attempt N: exponential backoff with full jitter
/// (a uniformly random delay between zero and `min(cap, base × 2^attempt)`), so a fleet of phones cut at
/// once does not come back at once.
public struct ReconnectPolicy: Sendable, Hashable {
    /// Upper bound of the first attempt's delay.
    public var base: Duration
    /// Largest delay bound.
    public var cap: Duration

    public init(base: Duration, cap: Duration) {
        self.base = base
        self.cap = cap
    }

    /// In the foreground: come back fast (0–250 ms first, at most 8 s).
    public static let foreground = ReconnectPolicy(base: .milliseconds(250), cap: .seconds(8))
    /// In the background: save battery (0–2 s first, at most 2 min).
    public static let background = ReconnectPolicy(base: .seconds(2), cap: .seconds(120))

    /// The delay bound for `attempt` (0-based), before jitter.
    public func bound(attempt: Int) -> Duration {
        let exponent = min(attempt, 30)
        let scaled = base * (1 << exponent)
        return scaled < cap ? scaled : cap
    }

    /// The jittered delay for `attempt` (0-based).
    public func delay(attempt: Int, using generator: inout some RandomNumberGenerator) -> Duration {
        let bound = self.bound(attempt: attempt)
        let millis = bound.components.seconds * 1000 + bound.components.attoseconds / 1_000_000_000_000_000
        guard millis > 0 else { return .zero }
        return .milliseconds(Int64.random(in: 0...millis, using: &generator))
    }
}

/// Whether the app is on screen; the library's timings follow it, as mobile long-connection libraries do.
public enum ApplicationState: Sendable, Hashable {
    /// On screen: fast reconnects, the client probes a silent connection quickly.
    case foreground
    /// Off screen: slow reconnects, no client-side probes (the server's pings keep the link alive).
    case background

    /// The reconnect policy for this state.
    public var reconnectPolicy: ReconnectPolicy {
        self == .foreground ? .foreground : .background
    }

    /// After this much silence the client sends its own ping; nil = never (background).
    public var probeAfter: Duration? {
        self == .foreground ? .seconds(10) : nil
    }
}
