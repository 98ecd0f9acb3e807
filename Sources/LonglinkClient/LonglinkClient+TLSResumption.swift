import Synchronization

/// How a client's TLS handshakes went: full ones (the server's certificate checked, a signature made) and ones
/// that resumed the session the server gave on an earlier connection (a ticket: no certificate, much cheaper
/// for the server). The client keeps the newest ticket across reconnects and offers it on the next attempt.
public struct TLSHandshakeCounts: Sendable, Hashable, CustomStringConvertible {
    /// Full handshakes finished.
    public var full: Int
    /// Resumed handshakes finished.
    public var resumed: Int
    /// Whether the newest handshake resumed (nil before the first TLS handshake, and without TLS).
    public var lastResumed: Bool?

    /// Creates counts.
    public init(full: Int = 0, resumed: Int = 0, lastResumed: Bool? = nil) {
        self.full = full
        self.resumed = resumed
        self.lastResumed = lastResumed
    }

    public var description: String {
        let last = lastResumed.map { $0 ? ", last resumed" : ", last full" } ?? ""
        return "TLS handshakes: \(full) full, \(resumed) resumed\(last)"
    }
}

extension LonglinkClient {
    /// The TLS handshakes this client finished, full and resumed (all zero without TLS).
    public var tlsHandshakes: TLSHandshakeCounts {
        let last = shared.tlsLastResumed.load(ordering: .relaxed)
        return TLSHandshakeCounts(
            full: shared.tlsFullHandshakes.load(ordering: .relaxed),
            resumed: shared.tlsResumedHandshakes.load(ordering: .relaxed),
            lastResumed: last < 0 ? nil : last == 1
        )
    }
}

extension ClientShared {
    /// Counts a finished TLS handshake.
    func tlsHandshakeFinished(resumed: Bool) {
        if resumed { tlsResumedHandshakes.add(1, ordering: .relaxed) } else { tlsFullHandshakes.add(1, ordering: .relaxed) }
        tlsLastResumed.store(resumed ? 1 : 0, ordering: .relaxed)
    }
}
