import Foundation
import LonglinkClient
import LonglinkServer
import LonglinkCore
import LonglinkGateway
import LonglinkOpenSSL
import LonglinkProtobuf
import LonglinkTestSupport
import Synchronization
import Testing

/// `openssl s_client` against a listener, feeding `input` after the handshake; returns its output.
func sClient(_ port: Int, _ extra: [String], input: [UInt8] = [], timeout: Duration = .seconds(10)) throws -> ProcessRunner.Output {
    var environment = ProcessInfo.processInfo.environment
    environment["OPENSSL_CONF"] = "/dev/null"  // the client's own defaults must not be what refuses old versions
    return try ProcessRunner.run(
        ["openssl", "s_client", "-connect", "127.0.0.1:\(port)", "-servername", "localhost"] + extra,
        input: input,
        environment: environment,
        timeout: timeout
    )
}

@Suite("TLS listeners (real handshakes, certificates made by openssl)", .serialized, .ownThreads)
struct TLSGatewayTests {
    @Test("the client library subscribes and receives pushes over TLS, beside a plain listener")
    func clientOverTLS() async throws {
        let gateway = try SecureGateway()
        defer { gateway.stop() }
        let route = Route.order(.taxi, OrderID("t1")!)
        let client = try gateway.client(.tls, token: gateway.token(), tls: .client(trust: .caFile(certificates.caFile)), serverName: "localhost")
        defer { client.close() }
        let plain = try gateway.client(.plain, token: gateway.token())
        defer { plain.close() }
        let seen = LockedCounter()
        let plainSeen = LockedCounter()
        let (answered, plainAnswered) = (SubscriptionAnswered(client, route), SubscriptionAnswered(plain, route))
        let token = client.observe(route) { _ in seen.add() }
        let plainToken = plain.observe(route) { _ in plainSeen.add() }
        defer { token.cancel(); plainToken.cancel() }
        #expect(await eventually { client.state.isConnected && plain.state.isConnected })
        #expect(await eventually { answered.isAnswered && plainAnswered.isAnswered })
        #expect(gateway.running.gateway.counters.tlsConnectionCount == 1, "connections are labelled by transport")
        for change in taxiChanges("t1", count: 20) { try await gateway.apply(change) }
        #expect(await eventually { seen.value >= 20 && plainSeen.value >= 20 })
        #expect(seen.value == 20)
    }

    @Test("openssl s_client completes a handshake and exchanges frames (connect → connected)")
    func sClientInterop() throws {
        let gateway = try SecureGateway()
        defer { gateway.stop() }
        // connect, then a frame of the wrong direction so the server answers, disconnects and closes.
        var input = try HostilePeer.bytes(.connect(ConnectRequest(token: gateway.token(), clientName: "s_client")))
        input += [2, 0x12, 0x00]  // body: field 2 (a ServerFrame kind), empty: protocol violation
        let output = try sClient(gateway.port(.tls), ["-quiet", "-CAfile", certificates.caFile, "-verify_return_error"], input: input)
        var buffer = ByteBuffer(bytes: output.stdout)
        let codec = ProtobufFrameCodec()
        var frames: [ServerFrame] = []
        while let frame = try codec.decodeNextServerFrame(from: &buffer) { frames.append(frame) }
        guard case .connected(let connected)? = frames.first else {
            Issue.record("no connected frame from s_client output: \(output.text)")
            return
        }
        #expect(connected.nodeID == "secure-node")
        #expect(frames.contains { if case .disconnect(let d) = $0 { d.code == .protocolViolation } else { false } })
    }

    @Test("TLS 1.2 and 1.3 are accepted; TLS 1.0 and 1.1 are refused with a protocol_version alert")
    func protocolVersions() throws {
        let gateway = try SecureGateway()
        defer { gateway.stop() }
        let port = gateway.port(.tls)
        for (flag, name) in [("-tls1_2", "TLSv1.2"), ("-tls1_3", "TLSv1.3")] {
            let output = try sClient(port, [flag, "-CAfile", certificates.caFile])
            #expect(output.text.contains("New, \(name), Cipher is"), "\(flag): \(output.text)")
            #expect(output.text.contains("Verify return code: 0 (ok)"))
        }
        for flag in ["-tls1_1", "-tls1"] {
            let output = try sClient(port, [flag, "-cipher", "DEFAULT@SECLEVEL=0"])
            #expect(output.status != 0, "\(flag) must fail")
            #expect(output.text.contains("alert protocol version"), "\(flag): the server must refuse: \(output.text)")
        }
    }

    @Test("TLS 1.2 accepts only forward-secret AEAD suites (ECDHE with AES-GCM or ChaCha20-Poly1305)")
    func cipherSuites() throws {
        let gateway = try SecureGateway()
        defer { gateway.stop() }
        let good: [(SecureGateway.Listener, String)] = [
            (.tls, "ECDHE-ECDSA-AES128-GCM-SHA256"), (.tls, "ECDHE-ECDSA-AES256-GCM-SHA384"),
            (.tls, "ECDHE-ECDSA-CHACHA20-POLY1305"), (.rsa, "ECDHE-RSA-AES128-GCM-SHA256"),
            (.rsa, "ECDHE-RSA-AES256-GCM-SHA384"), (.rsa, "ECDHE-RSA-CHACHA20-POLY1305"),
        ]
        for (listener, suite) in good {
            let output = try sClient(gateway.port(listener), ["-tls1_2", "-cipher", suite, "-CAfile", certificates.caFile])
            #expect(output.text.contains("New, TLSv1.2, Cipher is \(suite)"), "\(suite) must be accepted: \(output.text)")
        }
        let bad: [(SecureGateway.Listener, String)] = [
            (.rsa, "AES128-SHA"),  // static RSA key exchange (no forward secrecy), CBC
            (.rsa, "AES256-SHA256"),
            (.rsa, "AES128-GCM-SHA256"),  // AEAD, but static RSA key exchange
            (.rsa, "ECDHE-RSA-AES128-SHA"),  // forward secret, but CBC with HMAC-SHA1
            (.tls, "ECDHE-ECDSA-AES128-SHA"),
            (.tls, "ECDHE-ECDSA-AES256-SHA384"),
            (.rsa, "DHE-RSA-AES128-GCM-SHA256"),  // finite-field DHE is not offered either
        ]
        for (listener, suite) in bad {
            let output = try sClient(gateway.port(listener), ["-tls1_2", "-cipher", "\(suite)@SECLEVEL=0"])
            #expect(output.status != 0, "\(suite) must be refused: \(output.text)")
            #expect(!output.text.contains("Cipher is \(suite)"), "\(suite) must be refused: \(output.text)")
            #expect(output.text.contains("alert handshake failure"), "\(suite): the server must refuse: \(output.text)")
        }
        // TLS 1.3 is unaffected: its suites are all AEAD with ephemeral key exchange.
        let modern = try sClient(gateway.port(.rsa), ["-tls1_3", "-CAfile", certificates.caFile])
        #expect(modern.text.contains("New, TLSv1.3, Cipher is TLS_"), "\(modern.text)")
    }

    @Test("TLS 1.3 picks AES-128-GCM-SHA256 first (server order) even for a client preferring AES-256-GCM-SHA384")
    func tls13SuiteOrder() throws {
        let gateway = try SecureGateway()
        defer { gateway.stop() }
        // openssl s_client offers TLS_AES_256_GCM_SHA384 first (OpenSSL's default order); the server's order wins.
        let preferred = try sClient(gateway.port(.tls), ["-tls1_3", "-CAfile", certificates.caFile])
        #expect(preferred.text.contains("New, TLSv1.3, Cipher is TLS_AES_128_GCM_SHA256"), "\(preferred.text)")
        // A client offering only AES-256 still gets it.
        let only = try sClient(gateway.port(.tls), ["-tls1_3", "-ciphersuites", "TLS_AES_256_GCM_SHA384", "-CAfile", certificates.caFile])
        #expect(only.text.contains("New, TLSv1.3, Cipher is TLS_AES_256_GCM_SHA384"), "\(only.text)")
    }

    @Test(
        "our client refuses expired, wrong-host and self-signed certificates",
        arguments: [
            (SecureGateway.Listener.expired, "certificate has expired"),
            (.wrongHost, "hostname mismatch"),
            (.selfSigned, "self-signed certificate"),
        ]
    )
    func refusesBadCertificates(_ listener: SecureGateway.Listener, _ reason: String) async throws {
        let gateway = try SecureGateway()
        defer { gateway.stop() }
        let log = LogCapture()
        let client = try gateway.client(
            listener,
            token: gateway.token(),
            tls: .client(trust: .caFile(certificates.caFile)),
            serverName: "localhost",
            logger: log.logger
        )
        defer { client.close() }
        #expect(await eventually { log.text.contains(reason) }, "log: \(log.text)")
        #expect(!client.state.isConnected)
        // The same listener with verification off connects: the refusal was the certificate check.
        let insecure = try gateway.client(listener, token: gateway.token(), tls: .client(trust: .insecureNoVerification))
        defer { insecure.close() }
        #expect(await eventually { insecure.state.isConnected })
        #expect(!client.state.isConnected)
    }

    @Test("a listener with --tls-client-ca refuses clients without a certificate and admits those with one")
    func clientCertificates() async throws {
        let gateway = try SecureGateway()
        defer { gateway.stop() }
        let log = LogCapture()
        let anonymous = try gateway.client(
            .clientCertificate,
            token: gateway.token(),
            tls: .client(trust: .caFile(certificates.caFile)),
            logger: log.logger
        )
        defer { anonymous.close() }
        // TLS 1.3 checks the client's certificate after the client finished its handshake: the server's alert
        // ("certificate required") usually arrives first, but when the server closes with the client's first
        // frame unread, the kernel answers with a reset that can overtake it.
        #expect(
            await eventually { log.text.contains("certificate required") || log.text.contains("connection reset by peer") },
            "log: \(log.text)"
        )
        let identified = try gateway.client(
            .clientCertificate,
            token: gateway.token(),
            tls: .client(
                trust: .caFile(certificates.caFile),
                certificateFile: certificates.clientCertificate,
                privateKeyFile: certificates.clientKey
            )
        )
        defer { identified.close() }
        #expect(await eventually { identified.state.isConnected })
        #expect(!anonymous.state.isConnected)
        // A certificate from outside the CA is refused too.
        let output = try sClient(
            gateway.port(.clientCertificate),
            ["-quiet", "-CAfile", certificates.caFile, "-cert", certificates.selfSignedCertificate, "-key", certificates.selfSignedKey],
            input: try HostilePeer.bytes(.ping)
        )
        #expect(output.text.contains("alert unknown ca") || output.text.contains("alert bad certificate"), "\(output.text)")
    }

    @Test("a reload (SIGHUP) serves the new certificate to new connections and keeps live ones")
    func reload() async throws {
        let moving = certificates.path("moving-\(UInt32.random(in: 0...UInt32.max)).pem")
        try FileManager.default.copyItem(atPath: certificates.serverCertificate, toPath: moving)
        let gateway = try SecureGateway(serverCertificate: moving)
        defer { gateway.stop() }
        let route = Route.order(.taxi, OrderID("r1")!)
        let client = try gateway.client(.tls, token: gateway.token(), tls: .client(trust: .caFile(certificates.caFile)))
        defer { client.close() }
        let seen = LockedCounter()
        let answered = SubscriptionAnswered(client, route)
        let observation = client.observe(route) { _ in seen.add() }
        defer { observation.cancel() }
        #expect(await eventually { answered.isAnswered })
        let before = try sClient(gateway.port(.tls), ["-CAfile", certificates.caFile])
        #expect(before.text.contains("CN = localhost"))

        try FileManager.default.removeItem(atPath: moving)
        try FileManager.default.copyItem(atPath: certificates.reloadedCertificate, toPath: moving)
        try gateway.serverContext.reload()

        let after = try sClient(gateway.port(.tls), ["-CAfile", certificates.caFile])
        #expect(after.text.contains("CN = reloaded"), "\(after.text)")
        for change in taxiChanges("r1", count: 5) { try await gateway.apply(change) }
        #expect(await eventually { seen.value == 5 })
        #expect(gateway.counters.accepted >= 3)
        #expect(client.state.isConnected)
    }
}

/// A thread-safe counter for observer callbacks.
final class LockedCounter: Sendable {
    private let count = Mutex(0)
    func add(_ n: Int = 1) { count.withLock { $0 += n } }
    var value: Int { count.withLock { $0 } }
}
