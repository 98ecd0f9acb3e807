import LonglinkLoop
import LonglinkOpenSSL
import LonglinkTestSupport
import LonglinkWebSocket
import Testing

extension TransportContractFactory {
    /// `WebSocketTransport` (server) and `WebSocketClientTransport` over `server`/`client` byte streams; the refused
    /// client asks for another path.
    static func webSocket(
        _ name: String,
        server: any TransportFactory,
        client: any TransportFactory
    ) -> TransportContractFactory {
        let endpoint = WebSocketEndpoint(
            policy: WebSocketUpgradePolicy(secure: server.isEncrypted),
            maxMessageSize: WebSocketEndpoint.messageLimit(forMaxFrameSize: 2 << 20)
        )
        return TransportContractFactory(
            name: name,
            server: WebSocketTransportFactory(inner: server, endpoint: endpoint),
            client: WebSocketClientTransportFactory(inner: client, host: "localhost"),
            refusedClient: WebSocketClientTransportFactory(inner: client, host: "localhost", path: "/elsewhere"),
            halfCloseIsTruncation: server.isEncrypted
        )
    }

    /// `ws`: WebSocket over plain TCP.
    static let ws = webSocket("ws", server: PlainTransportFactory(), client: PlainTransportFactory())

    /// `wss`: WebSocket over TLS, with throwaway certificates.
    static func wss(_ certificates: TestCertificates) throws -> TransportContractFactory {
        let server = try TLSContext(.server(certificateFile: certificates.serverCertificate, privateKeyFile: certificates.serverKey))
        let client = try TLSContext(.client(trust: .caFile(certificates.caFile)))
        return webSocket(
            "wss",
            server: TLSTransportFactory(context: server),
            client: TLSTransportFactory(context: client)
        )
    }
}

@Suite("WebSocket transports' contract on real loopback sockets (ws, and wss with real TLS)", .ownThreads)
struct WebSocketTransportContractTests {
    @Test("ws keeps the Transport contract", arguments: TransportContract.checks)
    func ws(_ check: TransportContractCheck) throws { try check.run(.ws) }

    @Test("wss keeps the Transport contract", arguments: TransportContract.checks)
    func wss(_ check: TransportContractCheck) throws { try check.run(.wss(try TestCertificates.shared())) }
}
