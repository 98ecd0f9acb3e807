import Foundation
import LonglinkClient
import LonglinkServer
import LonglinkCore
import LonglinkGateway
import LonglinkLoop
import LonglinkOpenSSL
import LonglinkStores
import LonglinkTestSupport
import Synchronization

/// Certificates shared by the suites of this target (the process-wide set: made once with the `openssl` command,
/// removed at exit).
let certificates = try! TestCertificates.shared()

/// The token secret of every gateway in these tests.
let testSecret = Array("longlink-security-tests-secret-0123456789".utf8)

/// A real gateway in this process, secured as `serve` would run it: JWT tokens, a plain listener and TLS
/// listeners (good certificate; expired; wrong host; self-signed; client certificates required).
final class SecureGateway {
    /// Listener indexes (`rsa`: the good certificate for an RSA key).
    enum Listener: Int { case plain = 0, tls, expired, wrongHost, selfSigned, clientCertificate, rsa }

    let running: RunningGateway
    /// The good server context (tests reload it).
    let serverContext: TLSContext

    init(
        loops: Int = 2,
        handshakeMillis: UInt64 = 10_000,
        pingMillis: UInt64 = 25_000,
        pongMillis: UInt64 = 10_000,
        tokenWarningLeadMillis: UInt64 = 60_000,
        maxViolations: Int = 3,
        publishesPerSecond: Int = 1_000,
        publishBurst: Int = 2_000,
        admission: AdmissionLimits = AdmissionLimits(connectionsPerSecond: 0, maxConnectionsPerAddress: 0),
        maxConnections: Int = 19_000,
        serverCertificate: String = certificates.serverCertificate
    ) throws {
        let c = certificates
        serverContext = try TLSContext(.server(certificateFile: serverCertificate, privateKeyFile: c.serverKey))
        func tls(_ certificate: String, key: String = c.serverKey, clientCA: String? = nil) throws -> GatewayListener {
            let context = try TLSContext(.server(certificateFile: certificate, privateKeyFile: key, clientCAFile: clientCA))
            return GatewayListener(host: "127.0.0.1", port: 0, transport: TLSTransportFactory(context: context))
        }
        let peer = PeerSettings(
            nodeID: "secure-node",
            pingIntervalMillis: pingMillis,
            pongTimeoutMillis: pongMillis,
            handshakeTimeoutMillis: handshakeMillis,
            maxViolations: maxViolations,
            tokenWarningLeadMillis: tokenWarningLeadMillis,
            publishesPerSecond: publishesPerSecond,
            publishBurst: publishBurst
        )
        let configuration = GatewayConfiguration(
            host: "127.0.0.1",
            port: 0,
            loopCount: loops,
            peer: peer,
            maxConnections: maxConnections,
            drainPeriod: .milliseconds(300),
            additionalListeners: [
                GatewayListener(host: "127.0.0.1", port: 0, transport: TLSTransportFactory(context: serverContext)),
                try tls(c.expiredCertificate),
                try tls(c.wrongHostCertificate),
                try tls(c.selfSignedCertificate, key: c.selfSignedKey),
                try tls(c.serverCertificate, clientCA: c.caFile),
                try tls(c.rsaServerCertificate, key: c.rsaServerKey),
            ],
            admission: admission
        )
        running = try RunningGateway.start(
            gateway: configuration,
            store: .memory,
            authorizer: try JWTAuthorizer(secret: testSecret)
        )
    }

    func port(_ listener: Listener) -> Int { running.gateway.port(ofListener: listener.rawValue) }
    var counters: GatewayStats { running.gateway.counters.snapshot }

    /// A signed token.
    func token(
        _ subject: String = "rider-1",
        role: Principal.Role = .subscriber,
        routes: [String] = ["order://taxi/*"],
        ttlSeconds: Int64 = 3600
    ) -> String {
        let nowSeconds = UInt64(Date().timeIntervalSince1970)
        let claims = JWTClaims(
            subject: subject,
            role: role,
            routes: routes.map { try! RoutePattern(parsing: $0) },
            expiresAt: UInt64(Int64(nowSeconds) + ttlSeconds)
        )
        return try! JWTMinter(secret: testSecret).mint(claims)
    }

    /// A client library connection (plain unless `tls` is given), on the `backend` selector.
    func client(
        _ listener: Listener = .plain,
        backend: SelectorBackend = .platformDefault,
        token: String,
        tls: TLSConfiguration? = nil,
        serverName: String? = nil,
        logger: Logger = .disabled,
        reconnects: Bool = true
    ) throws -> LonglinkClient {
        var configuration = ClientConfiguration(
            host: "127.0.0.1",
            port: port(listener),
            token: token,
            connectTimeout: .seconds(5),
            selectorBackend: backend
        )
        configuration.reconnects = reconnects
        configuration.serverName = serverName
        if let tls { configuration.transport = TLSTransportFactory(context: try TLSContext(tls)) }
        return try LonglinkClient(configuration: configuration, logger: logger)
    }

    @discardableResult
    func apply(_ change: OrderChange) async throws -> AppliedChange { try await running.writer.apply(change) }

    func stop() { running.drainAndStop() }
}

/// Keeps log lines for assertions (e.g. why a TLS handshake failed).
final class LogCapture: LogSink {
    private let lines = Mutex<[String]>([])
    func write(_ record: LogRecord) { lines.withLock { $0.append(record.message) } }
    var text: String { lines.withLock { $0.joined(separator: "\n") } }
    var logger: Logger { Logger(label: "test", level: .debug, sink: self) }
}

/// Open file descriptors of this process (entries of /proc/self/fd).
func openDescriptorCount() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
}

/// `count` legal taxi changes for one order (created, then dispatching ⇄ driver_assigned).
func taxiChanges(_ id: String, count: Int) -> [OrderChange] {
    let order = OrderID(id)!
    return (0..<count).map { index in
        switch index {
        case 0: OrderChange(orderID: order, line: .taxi, targetState: "created")
        case _ where index % 2 == 1: OrderChange(orderID: order, line: .taxi, targetState: "dispatching")
        default: OrderChange(orderID: order, line: .taxi, targetState: "driver_assigned", fields: OrderFields(driverID: "d-\(index)"))
        }
    }
}

/// Set once `client`'s subscribe to `route` was answered on its connection: records committed from then on reach
/// it as pushes. The gateway counts a subscription when the request arrives, before its snapshot is read, so a
/// change applied in between arrives folded into the snapshot (one notification, not one per record).
final class SubscriptionAnswered: Sendable {
    private let answered = Mutex(false)

    init(_ client: LonglinkClient, _ route: Route) {
        client.onSubscribed { subscribed, _ in
            if subscribed == route { self.answered.withLock { $0 = true } }
        }
    }

    var isAnswered: Bool { answered.withLock { $0 } }
}
