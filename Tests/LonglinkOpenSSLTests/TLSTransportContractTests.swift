import LonglinkLoop
import LonglinkOpenSSL
import LonglinkTestSupport
import Testing

extension TransportContractFactory {
    /// `TLSTransport` on both sides with throwaway certificates: the server's issued by the test CA, a client
    /// trusting that CA, and a refused client trusting only an unrelated self-signed certificate.
    static func tls(_ certificates: TestCertificates) throws -> TransportContractFactory {
        let server = try TLSContext(.server(certificateFile: certificates.serverCertificate, privateKeyFile: certificates.serverKey))
        let client = try TLSContext(.client(trust: .caFile(certificates.caFile)))
        let stranger = try TLSContext(.client(trust: .caFile(certificates.selfSignedCertificate)))
        return TransportContractFactory(
            name: "tls",
            server: TLSTransportFactory(context: server),
            client: TLSTransportFactory(context: client),
            refusedClient: TLSTransportFactory(context: stranger),
            halfCloseIsTruncation: true
        )
    }
}

@Suite("TLSTransport contract on real loopback sockets and real TLS handshakes", .ownThreads)
struct TLSTransportContractTests {
    @Test("keeps the Transport contract", arguments: TransportContract.checks)
    func contract(_ check: TransportContractCheck) throws {
        try check.run(.tls(try TestCertificates.shared()))
    }

    @Test(
        "the refused-handshake check fails on a transport that hides errors",
        arguments: TransportContract.faultCases(refusing: true).suffix(1)
    )
    func catchesItsFault(_ check: TransportContractCheck, _ fault: TransportFault) throws {
        let broken = try TransportContractFactory.tls(try TestCertificates.shared()).broken(by: fault)
        withKnownIssue("a TLSTransport that \(fault) must fail this check") { try check.run(broken) }
    }
}
