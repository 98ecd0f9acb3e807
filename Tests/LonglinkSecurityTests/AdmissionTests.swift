import LonglinkClient
import LonglinkCore
import LonglinkGateway
import LonglinkLoop
import LonglinkOpenSSL
import LonglinkTestSupport
import Testing

@Suite("Admission control at accept time", .ownThreads)
struct AdmissionTests {
    @Test("connections beyond the per-process rate are refused with connection_rate_limited and a retry hint")
    func connectionRate() throws {
        let gateway = try SecureGateway(admission: AdmissionLimits(connectionsPerSecond: 1, connectionBurst: 3, maxConnectionsPerAddress: 0))
        defer { gateway.stop() }
        var peers: [HostilePeer] = []
        // Many more than the burst, so a loaded machine that spreads the accepts over seconds still overruns it.
        for _ in 0..<30 { peers.append(try HostilePeer(port: gateway.port(.plain))) }
        var connected = 0
        var limited: [Disconnect] = []
        for peer in peers {
            try peer.send(.connect(ConnectRequest(token: gateway.token())))
            let frame = try peer.next(timeout: .seconds(5)) { frame -> ServerFrame? in
                switch frame {
                case .connected, .disconnect: frame
                default: nil
                }
            }
            switch frame {
            case .connected?: connected += 1
            case .disconnect(let d)?: limited.append(d)
            default: Issue.record("no answer")
            }
        }
        #expect(connected >= 3)
        #expect(limited.count >= 2, "connected \(connected)")
        #expect(limited.allSatisfy { $0.code == .connectionRateLimited && $0.reconnectAfterMillis >= 100 })
        #expect(gateway.counters.disconnects[.connectionRateLimited] == limited.count)
    }

    @Test("connections per source address are capped; a slot frees when a connection closes")
    func perAddress() async throws {
        let gateway = try SecureGateway(admission: AdmissionLimits(connectionsPerSecond: 0, maxConnectionsPerAddress: 3))
        defer { gateway.stop() }
        var peers: [HostilePeer] = []
        for _ in 0..<3 {
            let peer = try HostilePeer(port: gateway.port(.plain))
            #expect(try peer.handshake(token: gateway.token()) != nil)
            peers.append(peer)
        }
        let fourth = try HostilePeer(port: gateway.port(.plain))
        #expect(try fourth.disconnect()?.code == .tooManyConnections)
        peers.removeFirst().close()
        #expect(await eventually { gateway.counters.connections == 2 })
        let fifth = try HostilePeer(port: gateway.port(.plain))
        #expect(try fifth.handshake(token: gateway.token()) != nil)
    }

    @Test("a TLS handshake flood over a budget of one step per iteration: all complete, established clients keep service")
    func handshakeBudget() async throws {
        let gateway = try SecureGateway(
            loops: 1,
            admission: AdmissionLimits(connectionsPerSecond: 0, maxConnectionsPerAddress: 0, handshakesPerIteration: 1)
        )
        defer { gateway.stop() }
        let route = Route.order(.taxi, OrderID("budget")!)
        let healthy = try gateway.client(token: gateway.token())
        defer { healthy.close() }
        let seen = LockedCounter()
        let answered = SubscriptionAnswered(healthy, route)
        let observation = healthy.observe(route) { _ in seen.add() }
        defer { observation.cancel() }
        #expect(await eventually { answered.isAnswered })
        // Idle TCP connections to the TLS port, then real TLS clients, all at once.
        var idle: [HostilePeer] = []
        for _ in 0..<60 { idle.append(try HostilePeer(port: gateway.port(.tls))) }
        var clients: [LonglinkClient] = []
        for index in 0..<30 {
            clients.append(try gateway.client(.tls, token: gateway.token("tls-\(index)"), tls: .client(trust: .caFile(certificates.caFile))))
        }
        defer { for client in clients { client.close() } }
        let changes = taxiChanges("budget", count: 10)
        for change in changes { try await gateway.apply(change) }
        #expect(await eventually { seen.value == changes.count })
        #expect(await eventually(timeout: .seconds(20)) { clients.allSatisfy { $0.state.isConnected } })
        #expect(gateway.counters.handshakesDeferred > 0)
    }
}
