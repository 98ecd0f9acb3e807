import Foundation
import LonglinkClient
import LonglinkCore
import LonglinkLoop
import LonglinkTestSupport
import Testing

/// Smart heartbeat end to end: a real gateway, the Swift client, and between them a loopback proxy that forgets a
/// connection idle for more than 5 s without telling either side (as a NAT does).
@Suite("Smart heartbeat", .ownThreads)
struct SmartHeartbeatTests {
    @Test(
        "the client learns an interval just below the NAT's idle limit and stays connected with it",
        .timeLimit(.minutes(2)), arguments: SelectorBackend.allCases
    )
    func convergesBelowIdleLimit(backend: SelectorBackend) async throws {
        // Bounds 2–8 s, steps of 2 s: 2 s and 4 s survive the 5 s idle limit, 6 s is silently dropped. The limit
        // sits halfway between the two, so a loaded machine (a server ping or a pong up to 1 s late) does not change
        // the outcome (with steps of 1.5 s and a 3.75 s limit, a ping 0.75 s late on a machine busy with two
        // compilers dropped the settled connection); the server's 250 ms tick divides every interval here.
        let gateway = try GatewayHarness(loops: 1, pingMillis: 2_000, pongMillis: 1_000, minPingMillis: 2_000, maxPingMillis: 8_000)
        defer { gateway.stop() }
        let proxy = try IdleDroppingProxy(upstreamPort: gateway.port, idleLimit: .milliseconds(5_000))
        defer { proxy.stop() }
        let store = MemoryHeartbeatStore()
        let learning = HeartbeatLearning(networkName: "test-nat", step: .milliseconds(2_000), pingsPerStep: 1, store: store)
        let client = try LonglinkClient(
            configuration: ClientConfiguration(
                host: "127.0.0.1", port: proxy.port, connectTimeout: .seconds(5), selectorBackend: backend, heartbeat: learning
            )
        )
        defer { client.close() }

        let settled = await eventually(timeout: .seconds(40)) { client.heartbeat.phase == .settled && client.state.isConnected }
        #expect(settled, "heartbeat: \(client.heartbeat), state: \(client.state), proxy: \(proxy.accepted) accepted, \(proxy.dropped) dropped")
        #expect(client.heartbeat.interval == .seconds(4))
        #expect(client.heartbeat.learned == .seconds(4))
        #expect(store.learnedHeartbeat(forNetwork: "test-nat") == LearnedHeartbeat(interval: .seconds(4), settled: true))
        #expect(proxy.dropped == 1)
        if case .connected(let info) = client.state { #expect(info.pingIntervalMillis == 4_000) }

        // Four learned intervals later the same connection is still up: a silent drop would have shown as silence
        // (limit 4 s + 2 s) and a new connection through the proxy.
        let connections = proxy.accepted
        try await Task.sleep(for: .seconds(16))
        #expect(proxy.accepted == connections)
        #expect(proxy.dropped == 1)
        #expect(client.state.isConnected)
        #expect(client.heartbeat.interval == .seconds(4))
    }

    @Test("a new connection starts from the interval the store holds for the network", arguments: SelectorBackend.allCases)
    func startsFromRemembered(backend: SelectorBackend) async throws {
        let gateway = try GatewayHarness(loops: 1, pingMillis: 1_000, pongMillis: 1_000, minPingMillis: 1_000, maxPingMillis: 5_000)
        defer { gateway.stop() }
        let store = MemoryHeartbeatStore()
        store.saveLearnedHeartbeat(LearnedHeartbeat(interval: .seconds(4), settled: true), forNetwork: "wifi:office")
        let client = try gateway.client(backend: backend) { configuration in
            configuration.heartbeat = HeartbeatLearning(networkName: "wifi:office", step: .seconds(1), pingsPerStep: 1, store: store)
        }
        defer { client.close() }
        try await client.waitUntilConnected(timeout: .seconds(10))
        guard case .connected(let info) = client.state else {
            Issue.record("not connected: \(client.state)")
            return
        }
        #expect(info.pingIntervalMillis == 4_000)  // proposed in connect, accepted within the bounds
        #expect(info.minPingIntervalMillis == 1_000 && info.maxPingIntervalMillis == 5_000)
        #expect(client.heartbeat.phase == .settled)
        #expect("\(client.heartbeat)" == "heartbeat 4 s (settled, learned 4 s)")
    }
}
