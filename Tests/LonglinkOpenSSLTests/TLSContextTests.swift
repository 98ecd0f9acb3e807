import LonglinkOpenSSL
import LonglinkTestSupport
import Testing

@Suite("TLS contexts from certificate files", .ownThreads)
struct TLSContextTests {
    static let certificates = try! TestCertificates.shared()

    @Test("a server context loads a certificate chain and its key, and reloads")
    func loads() throws {
        let c = Self.certificates
        let context = try TLSContext(.server(certificateFile: c.serverCertificate, privateKeyFile: c.serverKey, clientCAFile: c.caFile))
        try context.reload()
        #expect(context.reloadCount == 1)
        _ = try TLSContext(.client(trust: .caFile(c.caFile), certificateFile: c.clientCertificate, privateKeyFile: c.clientKey))
        _ = try TLSContext(.client(trust: .system))
    }

    @Test("unusable files are clear errors, and a failed reload keeps the old context")
    func errors() throws {
        let c = Self.certificates
        #expect(throws: TLSError.self) { _ = try TLSContext(.server(certificateFile: c.path("missing.pem"), privateKeyFile: c.serverKey)) }
        #expect(throws: TLSError.self) { _ = try TLSContext(.server(certificateFile: c.serverCertificate, privateKeyFile: c.clientKey)) }
        #expect(throws: TLSError.self) { _ = try TLSContext(.client(trust: .caFile(c.path("missing-ca.pem")))) }
        let reloadable = TLSConfiguration.server(certificateFile: c.path("moving.pem"), privateKeyFile: c.serverKey)
        #expect(try ProcessRunner.run(["cp", c.serverCertificate, c.path("moving.pem")]).status == 0)
        let context = try TLSContext(reloadable)
        _ = try ProcessRunner.run(["rm", c.path("moving.pem")])
        #expect(throws: TLSError.self) { try context.reload() }
        #expect(context.reloadCount == 0)
    }
}
