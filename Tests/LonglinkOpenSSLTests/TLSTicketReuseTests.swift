import Foundation
import LonglinkCore
import LonglinkLoop
import LonglinkOpenSSL
import LonglinkTestSupport
import Testing

/// When a resumption gets a new session ticket: real TLS handshakes between `TLSTransport`s on loopback sockets,
/// counted on both sides (`sessionTicketsIssued` on the server's context, `sessionTicketsReceived` on the client's).
@Suite("TLS session tickets on resumption (real handshakes on loopback sockets)", .ownThreads)
struct TLSTicketReuseTests {
    /// One connection: handshake, then 16 bytes from the server, so the client has read every record the server
    /// sent after its Finished (a NewSessionTicket comes before the data). Whether it resumed.
    static func connect(_ server: TLSContext, _ client: TLSContext) throws -> Bool {
        let pair = try TransportPair(
            server: TLSTransportFactory(context: server),
            client: TLSTransportFactory(context: client, defaultServerName: "localhost")
        )
        defer { pair.close() }
        try #require(pair.handshake(), "server: \(String(describing: pair.server.error)), client: \(String(describing: pair.client.error))")
        pair.server.outbound.append([UInt8](repeating: 7, count: 16))
        try #require(pair.pump { pair.client.received.readableBytes >= 16 })
        let transport = try #require(pair.client.transport as? TLSTransport)
        return transport.tlsSessionResumed == true
    }

    static func client(_ certificates: TestCertificates, maximumVersion: TLSConfiguration.MaximumVersion = .tls13) throws -> TLSContext {
        try TLSContext(.client(trust: .caFile(certificates.caFile), maximumVersion: maximumVersion))
    }

    @Test("many reconnects all resume on the first ticket: the server sends no new one while its key is current", arguments: [
        TLSConfiguration.MaximumVersion.tls13, .tls12,
    ])
    func reconnectsKeepTheirTicket(_ version: TLSConfiguration.MaximumVersion) throws {
        let certificates = try TestCertificates.shared()
        let server = try TLSContext(.server(certificateFile: certificates.serverCertificate, privateKeyFile: certificates.serverKey))
        let client = try Self.client(certificates, maximumVersion: version)
        #expect(try Self.connect(server, client) == false, "the first connection is a full handshake")
        #expect(server.sessionTicketsIssued == 1)
        #expect(client.sessionTicketsReceived == 1)
        var resumed = 0
        for _ in 0..<25 where try Self.connect(server, client) { resumed += 1 }
        #expect(resumed == 25, "every reconnect resumed")
        #expect(server.sessionTicketsIssued == 1, "no ticket after a resumption under the current key")
        #expect(client.sessionTicketsReceived == 1)
    }

    @Test("a ticket under a rotated-out but still accepted key resumes and is renewed under the current key")
    func olderKeyRenews() throws {
        let certificates = try TestCertificates.shared()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("longlink-tickets-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let keyFile = directory + "/ticket.key"
        let (old, new) = (Self.randomKey(), Self.randomKey())
        try Data(old).write(to: URL(fileURLWithPath: keyFile))
        let server = try TLSContext(
            .server(certificateFile: certificates.serverCertificate, privateKeyFile: certificates.serverKey, sessionTickets: .keyFile(keyFile))
        )
        let client = try Self.client(certificates)
        #expect(try Self.connect(server, client) == false)
        #expect(try Self.connect(server, client) == true)
        #expect(client.sessionTicketsReceived == 1)
        // Rotate: a new key in front encrypts, the old one still decrypts.
        try Data(new + old).write(to: URL(fileURLWithPath: keyFile))
        try server.reload()
        #expect(server.sessionTicketsIssued == 0, "the reloaded ring starts its count")
        #expect(try Self.connect(server, client) == true, "the old key still opens the ticket")
        #expect(server.sessionTicketsIssued == 1, "and the ticket is renewed")
        #expect(client.sessionTicketsReceived == 2)
        // Only the new key now: the renewed ticket is under it, so reconnects still resume, without renewal.
        try Data(new).write(to: URL(fileURLWithPath: keyFile))
        try server.reload()
        #expect(try Self.connect(server, client) == true, "the renewed ticket is under the new key")
        #expect(try Self.connect(server, client) == true)
        #expect(server.sessionTicketsIssued == 0)
        #expect(client.sessionTicketsReceived == 2)
    }

    @Test("a ticket past half its lifetime is renewed on resumption; the renewed one is kept again")
    func halfLifetimeRenews() throws {
        let certificates = try TestCertificates.shared()
        // Tickets live one rotation period: 4 s, so half of it is 2 s (the session times have whole seconds).
        let server = try TLSContext(
            .server(
                certificateFile: certificates.serverCertificate,
                privateKeyFile: certificates.serverKey,
                sessionTickets: .rotating(every: .seconds(4))
            )
        )
        let client = try Self.client(certificates)
        #expect(try Self.connect(server, client) == false)
        #expect(try Self.connect(server, client) == true)
        #expect(server.sessionTicketsIssued == 1, "under half its lifetime: kept")
        // Whole-second clocks: 2.1 s later the ticket is at least 2 s old by the session's own time stamps.
        Thread.sleep(forTimeInterval: 2.1)
        #expect(try Self.connect(server, client) == true)
        #expect(server.sessionTicketsIssued == 2, "past half its lifetime: renewed")
        #expect(client.sessionTicketsReceived == 2)
        #expect(try Self.connect(server, client) == true)
        #expect(server.sessionTicketsIssued == 2, "the renewed ticket is young again")
    }

    static func randomKey() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<80).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }
}
