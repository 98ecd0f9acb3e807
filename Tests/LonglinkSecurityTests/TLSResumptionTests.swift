import Foundation
import LonglinkClient
import LonglinkServer
import LonglinkCore
import LonglinkGateway
import LonglinkLoop
import LonglinkOpenSSL
import LonglinkOperations
import LonglinkStores
import LonglinkTestSupport
import Testing

/// A gateway with three TLS listeners, each on its own context (so each has its own ticket keys): TLS 1.3 with
/// random rotating keys, TLS 1.2 only, and one whose ticket keys come from a file and whose certificate file can
/// be replaced (then `shared.reload()`).
final class ResumptionGateway {
    enum Listener: Int { case tls13 = 1, tls12, shared, tls13Only }

    let running: RunningGateway
    let rotating: TLSContext
    let tls12: TLSContext
    let shared: TLSContext
    let tls13Only: TLSContext
    let directory: String

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("longlink-resumption-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: certificates.serverCertificate, toPath: directory + "/server.pem")
        try Self.writeKeys(to: directory + "/ticket.key")
        let c = certificates
        rotating = try TLSContext(.server(certificateFile: c.serverCertificate, privateKeyFile: c.serverKey))
        tls12 = try TLSContext(.server(certificateFile: c.serverCertificate, privateKeyFile: c.serverKey, maximumVersion: .tls12))
        shared = try TLSContext(
            .server(certificateFile: directory + "/server.pem", privateKeyFile: c.serverKey, sessionTickets: .keyFile(directory + "/ticket.key"))
        )
        tls13Only = try TLSContext(.server(certificateFile: c.serverCertificate, privateKeyFile: c.serverKey, minimumVersion: .tls13))
        let configuration = GatewayConfiguration(
            host: "127.0.0.1",
            port: 0,
            loopCount: 2,
            peer: PeerSettings(nodeID: "resumption-node"),
            drainPeriod: .milliseconds(300),
            additionalListeners: [rotating, tls12, shared, tls13Only].map {
                GatewayListener(host: "127.0.0.1", port: 0, transport: TLSTransportFactory(context: $0))
            },
            admission: AdmissionLimits(connectionsPerSecond: 0, maxConnectionsPerAddress: 0)
        )
        running = try RunningGateway.start(gateway: configuration, store: .memory, authorizer: try JWTAuthorizer(secret: testSecret))
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    /// A fresh random ticket key (80 bytes) in `path`.
    static func writeKeys(to path: String) throws {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<80).map { _ in UInt8.random(in: 0...255, using: &generator) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    func port(_ listener: Listener) -> Int { running.gateway.port(ofListener: listener.rawValue) }
    var counters: GatewayCounters { running.gateway.counters }

    func client(_ listener: Listener, tls: ClientTLS = ClientTLS(trust: .caFile(certificates.caFile))) throws -> LonglinkClient {
        let token = try JWTMinter(secret: testSecret).mint(
            JWTClaims(
                subject: "rider-1",
                role: .subscriber,
                routes: [try RoutePattern(parsing: "order://taxi/*")],
                expiresAt: UInt64(Date().timeIntervalSince1970) + 3600
            )
        )
        let configuration = ClientConfiguration(
            host: "127.0.0.1",
            port: port(listener),
            token: token,
            connectTimeout: .seconds(5),
            tls: tls,
            serverName: "localhost"
        )
        return try LonglinkClient(configuration: configuration)
    }

    func stop() { running.drainAndStop() }
}

/// TLS session resumption end to end: LonglinkClient against the gateway's real TLS listeners, with real
/// handshakes; the client's own counts (`tlsHandshakes`) and the server's (`longlink_tls_handshakes_total`).
@Suite("TLS session resumption (real gateway TLS listeners, real handshakes)", .serialized, .ownThreads)
struct TLSResumptionTests {
    /// Waits until `client` finished `total` TLS handshakes and is connected; its counts then.
    func handshakes(_ client: LonglinkClient, total: Int) async -> TLSHandshakeCounts {
        _ = await eventually { client.tlsHandshakes.full + client.tlsHandshakes.resumed >= total && client.state.isConnected }
        return client.tlsHandshakes
    }

    /// Cuts the client's connection and waits for its next TLS handshake.
    func reconnect(_ client: LonglinkClient) async -> TLSHandshakeCounts {
        let before = client.tlsHandshakes
        client.simulateNetworkLoss()
        return await handshakes(client, total: before.full + before.resumed + 1)
    }

    @Test("a reconnecting client resumes its session, over TLS 1.3 and TLS 1.2: client and server both count it", arguments: [
        ResumptionGateway.Listener.tls13, .tls12,
    ])
    func resumes(_ listener: ResumptionGateway.Listener) async throws {
        let gateway = try ResumptionGateway()
        defer { gateway.stop() }
        let client = try gateway.client(listener)
        defer { client.close() }
        let first = await handshakes(client, total: 1)
        #expect(first == TLSHandshakeCounts(full: 1, resumed: 0, lastResumed: false), "\(first)")
        let second = await reconnect(client)
        #expect(second == TLSHandshakeCounts(full: 1, resumed: 1, lastResumed: true), "\(second)")
        let third = await reconnect(client)
        #expect(third == TLSHandshakeCounts(full: 1, resumed: 2, lastResumed: true), "\(third)")
        #expect(client.state.isConnected)
        #expect(await eventually { gateway.counters.tlsResumedHandshakeCount == 2 })
        #expect(gateway.counters.tlsFullHandshakeCount == 1)
        let metrics = GatewayMetrics.render(gateway.counters, extras: GatewayMetrics.Extras(ready: true), version: "test")
        #expect(metrics.contains("longlink_tls_handshakes_total{kind=\"full\"} 1\n"), "\(metrics)")
        #expect(metrics.contains("longlink_tls_handshakes_total{kind=\"resumed\"} 2\n"))
    }

    @Test("a ticket under a key the server no longer has is not accepted: a full handshake, and the client still connects")
    func otherKeyFallsBack() async throws {
        let gateway = try ResumptionGateway()
        defer { gateway.stop() }
        let client = try gateway.client(.shared)
        defer { client.close() }
        _ = await handshakes(client, total: 1)
        #expect(await reconnect(client).lastResumed == true)
        // Another key file (as on a node that does not share this one), then reload.
        try ResumptionGateway.writeKeys(to: gateway.directory + "/ticket.key")
        try gateway.shared.reload()
        let afterNewKey = await reconnect(client)
        #expect(afterNewKey == TLSHandshakeCounts(full: 2, resumed: 1, lastResumed: false), "\(afterNewKey)")
        #expect(client.state.isConnected)
        #expect(await reconnect(client).lastResumed == true, "the ticket the new key issued resumes")
        #expect(await eventually { gateway.counters.tlsFullHandshakeCount == 2 && gateway.counters.tlsResumedHandshakeCount == 2 })
    }

    @Test("random rotating ticket keys survive a context reload (SIGHUP): reconnects after it still resume")
    func rotatingKeysSurviveReload() async throws {
        let gateway = try ResumptionGateway()
        defer { gateway.stop() }
        let client = try gateway.client(.tls13)
        defer { client.close() }
        _ = await handshakes(client, total: 1)
        try gateway.rotating.reload()
        #expect(await reconnect(client) == TLSHandshakeCounts(full: 1, resumed: 1, lastResumed: true))
    }

    @Test("a client with resumption off makes full handshakes every time")
    func resumptionOff() async throws {
        let gateway = try ResumptionGateway()
        defer { gateway.stop() }
        let client = try gateway.client(.tls13, tls: ClientTLS(trust: .caFile(certificates.caFile), resumesSessions: false))
        defer { client.close() }
        _ = await handshakes(client, total: 1)
        #expect(await reconnect(client) == TLSHandshakeCounts(full: 2, resumed: 0, lastResumed: false))
    }

    @Test("pins still hold on a resumed connection (checked against the certificate kept in the session); a resumed handshake does not see a replaced certificate, a full one does")
    func whatResumptionSkips() async throws {
        let gateway = try ResumptionGateway()
        defer { gateway.stop() }
        let pin = try ClientTLSTests.pin(of: certificates.serverCertificate)
        let pinned = ClientTLS(trust: .caFile(certificates.caFile), pinnedPublicKeys: [pin])
        let client = try gateway.client(.shared, tls: pinned)
        defer { client.close() }
        _ = await handshakes(client, total: 1)
        #expect(await reconnect(client) == TLSHandshakeCounts(full: 1, resumed: 1, lastResumed: true))

        // The server now presents an expired certificate (same key, same ticket keys).
        try FileManager.default.removeItem(atPath: gateway.directory + "/server.pem")
        try FileManager.default.copyItem(atPath: certificates.expiredCertificate, toPath: gateway.directory + "/server.pem")
        try gateway.shared.reload()
        let fresh = try gateway.client(.shared, tls: pinned)
        defer { fresh.close() }
        let state = await StateRecorder(fresh).first { $0.isConnected || $0.isStopped }
        guard case .stopped(.tls(let failure)?)? = state else {
            Issue.record("a full handshake must check the certificate, got \(String(describing: state))")
            return
        }
        #expect(failure.cause == .certificateExpired)
        // The resumed handshake sends no certificate: the check made on the full handshake stands (until the
        // ticket expires or the ticket keys change).
        #expect(await reconnect(client) == TLSHandshakeCounts(full: 1, resumed: 2, lastResumed: true))
    }

    @Test("a client limited to TLS 1.2 (ClientTLS.maximumVersion) resumes with abbreviated TLS 1.2 handshakes on the default listener, and cannot reach a TLS 1.3-only one")
    func tls12Client() async throws {
        let gateway = try ResumptionGateway()
        defer { gateway.stop() }
        let tls = ClientTLS(trust: .caFile(certificates.caFile), maximumVersion: .tls12)
        let client = try gateway.client(.tls13, tls: tls)
        defer { client.close() }
        #expect(await handshakes(client, total: 1) == TLSHandshakeCounts(full: 1, resumed: 0, lastResumed: false))
        #expect(await reconnect(client) == TLSHandshakeCounts(full: 1, resumed: 1, lastResumed: true))
        #expect(await eventually { gateway.counters.tlsResumedHandshakeCount == 1 })

        // The limit is real: a server that wants TLS 1.3 refuses the client in the handshake.
        let refused = try gateway.client(.tls13Only, tls: tls)
        defer { refused.close() }
        let state = await StateRecorder(refused).first { $0.isConnected || $0.failure != nil }
        guard case .tls? = state?.failure else {
            Issue.record("a TLS 1.2-only client must not reach a TLS 1.3-only server, got \(String(describing: state))")
            return
        }
        let unlimited = try gateway.client(.tls13Only)
        defer { unlimited.close() }
        #expect(await StateRecorder(unlimited).first { $0.isConnected || $0.isStopped }?.isConnected == true)
    }
}
