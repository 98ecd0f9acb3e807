import LonglinkCore
import Synchronization

/// Process-wide admission decisions shared by every loop: a token bucket for the connection rate and a count of
/// open connections per source address. Both sit behind one mutex taken once per accept and once per close,
/// which is cheap next to the accept itself.
///
/// The bucket runs on one clock for all loops, read inside the lock: each loop's cached iteration time would be
/// older on one loop than on another, and an earlier time than the last refill must never count as elapsed time
/// (it used to wrap around and refill the whole bucket, so with two loops no connection was ever rate limited).
final class ConnectionAdmission: Sendable {
    /// Why a connection is not admitted, and the disconnect it gets.
    struct Refusal: Hashable {
        var code: DisconnectCode
        var reason: String
        var retryAfterMillis: UInt32
    }

    private struct State {
        var tokens: Double
        var refilledAtNanos: UInt64
        var perAddress: [String: Int] = [:]
    }

    private let limits: AdmissionLimits
    private let state: Mutex<State>

    init(limits: AdmissionLimits, nowNanos: UInt64) {
        self.limits = limits
        self.state = Mutex(State(tokens: Double(max(1, limits.connectionBurst)), refilledAtNanos: nowNanos))
    }

    /// Takes a rate token and an address slot for a new connection from `address`, or says why not. A refused
    /// connection holds nothing, so `release` is only called for admitted ones. The time is read under the lock,
    /// so the bucket sees it only move forward whichever loop asks.
    func admit(address: String) -> Refusal? {
        state.withLock { state -> Refusal? in decide(address, nowNanos: MonotonicClock.nanoseconds(), &state) }
    }

    /// `admit(address:)` at a given monotonic time (tests). A time before the last refill counts as no time.
    func admit(address: String, nowNanos: UInt64) -> Refusal? {
        state.withLock { state -> Refusal? in decide(address, nowNanos: nowNanos, &state) }
    }

    private func decide(_ address: String, nowNanos: UInt64, _ state: inout State) -> Refusal? {
        if limits.connectionsPerSecond > 0 {
            let rate = Double(limits.connectionsPerSecond)
            if nowNanos > state.refilledAtNanos {
                let elapsed = Double(nowNanos - state.refilledAtNanos) / 1e9
                state.tokens = min(Double(max(1, limits.connectionBurst)), state.tokens + elapsed * rate)
                state.refilledAtNanos = nowNanos
            }
            guard state.tokens >= 1 else {
                // The time until a token is back, plus up to a second of jitter so refused clients spread out.
                let wait = (1 - state.tokens) / rate * 1000
                return Refusal(
                    code: .connectionRateLimited,
                    reason: "more than \(limits.connectionsPerSecond) new connections per second",
                    retryAfterMillis: UInt32(wait) + UInt32.random(in: 100...1_000)
                )
            }
        }
        if limits.maxConnectionsPerAddress > 0 && state.perAddress[address, default: 0] >= limits.maxConnectionsPerAddress {
            return Refusal(
                code: .tooManyConnections,
                reason: "more than \(limits.maxConnectionsPerAddress) connections from one address",
                retryAfterMillis: UInt32.random(in: 1_000...5_000)
            )
        }
        if limits.connectionsPerSecond > 0 { state.tokens -= 1 }
        state.perAddress[address, default: 0] += 1
        return nil
    }

    /// An admitted connection from `address` closed.
    func release(address: String) {
        state.withLock { state in
            guard let count = state.perAddress[address] else { return }
            if count <= 1 {
                state.perAddress.removeValue(forKey: address)
            } else {
                state.perAddress[address] = count - 1
            }
        }
    }

    /// Open connections from `address` (tests, inspection).
    func openConnections(from address: String) -> Int { state.withLock { $0.perAddress[address, default: 0] } }
}
