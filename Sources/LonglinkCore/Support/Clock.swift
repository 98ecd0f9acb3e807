import Glibc
import Synchronization

/// Wall-clock time for records and tokens, injectable so expiry and retention are testable.
public protocol WallClock: Sendable {
    /// Milliseconds since the Unix epoch.
    func nowMillis() -> UInt64
}

/// The system's real-time clock (`CLOCK_REALTIME`).
public struct SystemWallClock: WallClock {
    public init() {}

    public func nowMillis() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return UInt64(ts.tv_sec) * 1000 + UInt64(ts.tv_nsec) / 1_000_000
    }
}

/// A clock tests move by hand.
public final class ManualWallClock: WallClock {
    private let millis: Mutex<UInt64>

    public init(startMillis: UInt64 = 1_700_000_000_000) { millis = Mutex(startMillis) }

    public func nowMillis() -> UInt64 { millis.withLock { $0 } }

    /// Moves the clock forward.
    public func advance(byMillis delta: UInt64) { millis.withLock { $0 += delta } }
}

/// Monotonic nanoseconds (`CLOCK_MONOTONIC`), for timers and latency measurements.
public enum MonotonicClock {
    /// Nanoseconds since an arbitrary fixed point; never goes backwards.

    public static func nanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}
