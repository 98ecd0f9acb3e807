/// When a Redis store acknowledges a change.
///
/// - `replicas == 0` (the default): once the master ran the apply script. Redis replicates asynchronously, so a
///   master that dies right after may take the last acknowledged changes with it (a failover promotes a replica
///   that never saw them).
/// - `replicas > 0`: once `WAIT replicas timeout` confirmed that many replicas have every write of the batch.
///   Only then is the record published to subscribers, so no client ever sees a change a failover then loses.
///   When the replicas do not confirm in time the change fails with a retryable error although the master has it:
///   the publisher retries with the same idempotency key, which is answered from the stored record (and waited for
///   again) instead of being applied twice.
public struct RedisDurability: Hashable, Sendable, CustomStringConvertible {
    /// Replicas that must confirm each batch (0 = none, acknowledge on the master).
    public var replicas: Int
    /// How long `WAIT` may block per batch.
    public var timeout: Duration

    /// Acknowledge on the master (no `WAIT`).
    public static let master = RedisDurability(replicas: 0)

    public init(replicas: Int, timeout: Duration = .milliseconds(500)) {
        self.replicas = max(0, replicas)
        self.timeout = timeout
    }

    /// Whether `WAIT` is used.
    public var waits: Bool { replicas > 0 }

    /// The `WAIT` command.
    var waitCommand: [[UInt8]] {
        let (seconds, attoseconds) = timeout.components
        let millis = max(1, seconds * 1000 + attoseconds / 1_000_000_000_000_000)
        return [Array("WAIT".utf8), Array(String(replicas).utf8), Array(String(millis).utf8)]
    }

    public var description: String {
        guard waits else { return "on the master" }
        let (seconds, attoseconds) = timeout.components
        return "after WAIT \(replicas) \(seconds * 1000 + attoseconds / 1_000_000_000_000_000) ms"
    }
}
