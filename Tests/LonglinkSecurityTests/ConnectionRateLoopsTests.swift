import LonglinkCore
import LonglinkLoop
import LonglinkTestSupport
import Testing

@testable import LonglinkGateway

/// Issue 14, item 2: the connection-rate bucket is shared by every loop and must hold whatever their number.
@Suite("The connection rate limit with any number of loops", .ownThreads)
struct ConnectionRateLoopsTests {
    @Test("connections opened at once beyond the burst are refused with connection_rate_limited", arguments: [1, 2, 4])
    func burstBeyondTheBucket(loops: Int) async throws {
        let rate = 50
        let burst = 100
        // A long handshake timeout: on a loaded machine opening 400 sockets can take longer than the default 10 s,
        // and an admitted connection that never sends `connect` would be closed before it is counted.
        let gateway = try SecureGateway(
            loops: loops,
            handshakeMillis: 300_000,
            admission: AdmissionLimits(connectionsPerSecond: rate, connectionBurst: burst, maxConnectionsPerAddress: 0)
        )
        defer { gateway.stop() }
        let count = 400
        let started = ContinuousClock.now
        var peers: [FramePeer] = []
        for _ in 0..<count { peers.append(try FramePeer(port: gateway.port(.plain))) }
        defer { for peer in peers { peer.close() } }
        #expect(await eventually(timeout: .seconds(20)) { gateway.counters.accepted >= count })
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let limited = gateway.counters.disconnects[.connectionRateLimited] ?? 0
        #expect(await eventually { gateway.counters.connections == count - limited })
        let admitted = gateway.counters.connections
        // The bucket holds `burst` tokens and gains `rate` per second while the connections arrive.
        let allowed = burst + Int(Double(rate) * seconds) + 1
        #expect(admitted <= allowed, "\(loops) loops: \(admitted) admitted of \(count) in \(seconds) s, \(limited) refused")
        #expect(admitted >= burst && limited == count - admitted, "\(loops) loops: \(admitted) admitted, \(limited) refused")
    }

    @Test("a loop whose clock reads earlier than the last refill does not refill the bucket")
    func olderLoopClock() {
        let second: UInt64 = 1_000_000_000
        let admission = ConnectionAdmission(
            limits: AdmissionLimits(connectionsPerSecond: 1, connectionBurst: 1, maxConnectionsPerAddress: 0),
            nowNanos: 10 * second
        )
        #expect(admission.admit(address: "10.0.0.1", nowNanos: 10 * second) == nil)
        // Another loop sampled its clock a little before: no time has passed for the bucket, which is empty.
        #expect(admission.admit(address: "10.0.0.2", nowNanos: 10 * second - 1_000_000)?.code == .connectionRateLimited)
        #expect(admission.admit(address: "10.0.0.3", nowNanos: 10 * second + second / 2)?.code == .connectionRateLimited)
        #expect(admission.admit(address: "10.0.0.4", nowNanos: 11 * second) == nil)
    }
}
