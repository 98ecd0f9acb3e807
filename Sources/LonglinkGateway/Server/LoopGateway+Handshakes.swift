import LonglinkCore
import LonglinkLoop

/// The handshake budget: each loop runs at most `AdmissionLimits.handshakesPerIteration` transport handshake
/// steps per iteration (a TLS handshake step can cost a key exchange and a signature). Connections over the
/// budget are parked with no interest, so a flood of handshakes neither spins the loop nor delays the reads and
/// writes of established connections, and are resumed first come, first served as the budget refills before
/// each sleep. The handshake timeout still closes parked connections that wait too long.
extension LoopGateway {
    /// Takes one handshake step from this iteration's budget; false when it is spent.
    func takeHandshakeToken() -> Bool {
        guard handshakeTokens > 0 else { return false }
        handshakeTokens -= 1
        return true
    }

    /// Before sleeping: refills the budget and resumes parked handshakes with it, oldest first.
    func refillHandshakeBudget() {
        handshakeTokens = handshakesPerIteration
        guard !deferredHandshakes.isEmpty else { return }
        let count = min(handshakeTokens, deferredHandshakes.count)
        let resumed = deferredHandshakes.prefix(count)
        deferredHandshakes.removeFirst(count)
        for connection in resumed where !connection.isClosed {
            connection.handshakeDeferred = false
            connection.startHandshake()
        }
        deferredHandshakes.removeAll { $0.isClosed }
        // Parked connections have no interest, so nothing would wake the loop for them: keep iterating (an empty
        // local job makes the next epoll_wait return at once) until every one had its turn.
        if !deferredHandshakes.isEmpty { context.enqueue {} }
    }

    /// Connections waiting for handshake budget on this loop (tests, inspection).
    var deferredHandshakeCount: Int { deferredHandshakes.count }
}
