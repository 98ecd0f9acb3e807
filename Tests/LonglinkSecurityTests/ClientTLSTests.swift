import Foundation
import LonglinkClient
import LonglinkCore
import LonglinkLoop  // TLSFailureCause (apps without MemberImportVisibility match its cases without it)
import LonglinkTestSupport
import Testing

/// TLS through the client library's own settings (`ClientConfiguration.tls`, no OpenSSL import): trust from a CA
/// file or PEM bytes, and public-key pinning, against the gateway's real TLS listeners with the throwaway test CA.
@Suite("client library: TLS settings and public-key pinning (real gateway TLS listeners)", .serialized, .ownThreads)
struct ClientTLSTests {
    /// The SHA-256 of a certificate's SubjectPublicKeyInfo, as an app would compute its pin (openssl pipeline).
    static func pin(of certificate: String) throws -> PublicKeyPin {
        let script = "openssl x509 -in '\(certificate)' -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -r"
        let output = try ProcessRunner.run(["sh", "-c", script], timeout: .seconds(60))
        let hex = String(String(decoding: output.stdout, as: UTF8.self).prefix(64))
        return try #require(PublicKeyPin(hex: hex), "openssl printed \(output.text)")
    }

    func client(
        _ gateway: SecureGateway,
        _ listener: SecureGateway.Listener,
        backend: SelectorBackend,
        tls: ClientTLS
    ) throws -> LonglinkClient {
        let configuration = ClientConfiguration(
            host: "127.0.0.1",
            port: gateway.port(listener),
            token: gateway.token(),
            connectTimeout: .seconds(5),
            tls: tls,
            serverName: "localhost",
            selectorBackend: backend
        )
        return try LonglinkClient(configuration: configuration)
    }

    /// The state the client settles in: connected, or stopped with a reason.
    func outcome(_ client: LonglinkClient) async -> ConnectionState? {
        await StateRecorder(client).first { $0.isConnected || $0.isStopped }
    }

    @Test("a good certificate connects, trusting the CA from a file or from PEM bytes", arguments: SelectorBackend.allCases)
    func goodCertificate(backend: SelectorBackend) async throws {
        let gateway = try SecureGateway()
        defer { gateway.stop() }
        let pem = try [UInt8](Data(contentsOf: URL(fileURLWithPath: certificates.caFile)))
        for trust in [ClientTLS.Trust.caFile(certificates.caFile), .caPEM(pem)] {
            let client = try client(gateway, .tls, backend: backend, tls: ClientTLS(trust: trust))
            defer { client.close() }
            let state = await outcome(client)
            #expect(state?.isConnected == true, "\(trust): \(String(describing: state))")
        }
    }

    /// The TLS failure a client with `tls` stopped for on `listener` (nil, recorded as an issue, if it did not).
    func tlsStop(
        _ gateway: SecureGateway,
        _ listener: SecureGateway.Listener,
        backend: SelectorBackend,
        tls: ClientTLS
    ) async throws -> TLSFailure? {
        let client = try client(gateway, listener, backend: backend, tls: tls)
        defer { client.close() }
        let state = await outcome(client)
        guard case .stopped(.tls(let failure)?)? = state else {
            Issue.record("\(listener): expected a TLS stop, got \(String(describing: state))")
            return nil
        }
        #expect(state?.failure?.isTerminal == true)
        return failure
    }

    @Test("wrong name, expired and unknown CA stop the client with the typed TLS cause", arguments: SelectorBackend.allCases)
    func verificationFailures(backend: SelectorBackend) async throws {
        let gateway = try SecureGateway()
        defer { gateway.stop() }
        let trust = ClientTLS(trust: .caFile(certificates.caFile))
        #expect(try await tlsStop(gateway, .wrongHost, backend: backend, tls: trust)?.cause == .nameMismatch)
        #expect(try await tlsStop(gateway, .expired, backend: backend, tls: trust)?.cause == .certificateExpired)
        #expect(try await tlsStop(gateway, .selfSigned, backend: backend, tls: trust)?.cause == .unknownAuthority)
        #expect(try await tlsStop(gateway, .tls, backend: backend, tls: ClientTLS(trust: .system))?.cause == .unknownAuthority)
    }

    @Test("a pinned key that matches connects; a pin that does not match stops the client with pin mismatch", arguments: SelectorBackend.allCases)
    func pinning(backend: SelectorBackend) async throws {
        let gateway = try SecureGateway()
        defer { gateway.stop() }
        let serverPin = try Self.pin(of: certificates.serverCertificate)
        let otherPin = try Self.pin(of: certificates.clientCertificate)
        let matching = try client(gateway, .tls, backend: backend, tls: ClientTLS(trust: .caFile(certificates.caFile), pinnedPublicKeys: [otherPin, serverPin]))
        defer { matching.close() }
        let connected = await outcome(matching)
        #expect(connected?.isConnected == true, "\(String(describing: connected))")

        let failure = try await tlsStop(gateway, .tls, backend: backend, tls: ClientTLS(trust: .caFile(certificates.caFile), pinnedPublicKeys: [otherPin]))
        #expect(failure?.cause == .pinMismatch, "\(String(describing: failure?.detail))")
        #expect(failure.map { "\($0)" } == "TLS: certificate verify failed: public key does not match the pinned keys")
    }

    @Test("unusable TLS settings are refused when the client is made: an unreadable CA file, PEM bytes without a certificate")
    func unusableSettings() throws {
        for trust in [ClientTLS.Trust.caFile("/nonexistent/ca.pem"), .caPEM(Array("not a certificate".utf8))] {
            #expect(throws: ClientTLSError.self, "\(trust)") {
                try LonglinkClient(configuration: ClientConfiguration(tls: ClientTLS(trust: trust)))
            }
        }
    }

    @Test("a pin is 32 bytes or 64 hex digits (colons allowed)")
    func pinParsing() {
        #expect(PublicKeyPin(hex: String(repeating: "ab", count: 32))?.sha256 == [UInt8](repeating: 0xAB, count: 32))
        #expect(PublicKeyPin(hex: Array(repeating: "0F", count: 32).joined(separator: ":"))?.sha256.first == 0x0F)
        #expect(PublicKeyPin(hex: "abcd") == nil)
        #expect(PublicKeyPin(hex: String(repeating: "zz", count: 32)) == nil)
        #expect(PublicKeyPin(sha256: [1, 2, 3]) == nil)
    }
}
