import Foundation
import LonglinkTestSupport
import Testing

/// The example app (`Examples/RiderApp`, a package of its own depending on the `LonglinkClient` product alone), run
/// as a real process against a real gateway process: TLS with a throwaway CA made by openssl and a pinned key, JWT
/// tokens minted with `longlink token` and read from a file the test refreshes, an order's lifecycle published with
/// `longlink publish`. `make test` builds the app first (`make example-build`); without it these tests fail.
@Suite("example app: Examples/RiderApp against a TLS gateway", .serialized, .ownThreads)
struct RiderAppExampleTests {
    /// The taxi lifecycle the test publishes, in order.
    static let lifecycle = ["created", "dispatching", "driver_assigned", "driver_arriving", "driver_arrived", "in_trip", "completed", "paid"]

    @Test("follows an order over TLS with a pinned key through all three observer styles, across a token refresh")
    func followsAnOrder() async throws {
        let app = try #require(ExampleBinaries.riderApp(), ExampleBinaries.missingApp)
        let fixture = try ExampleFixture()
        let gateway = try await fixture.startGateway()
        defer { _ = gateway.process.terminate() }

        // The first token outlives the connect but not the test: the gateway warns about it at once (its warning
        // lead is 60 s), and the app's provider then reads the file again, which by then holds a long-lived token.
        let shortTTL = 12.0
        let minted = Date()
        let (short, long) = (
            try fixture.token(sub: "rider-1", routes: "order://taxi/ex-1", ttl: "\(Int(shortTTL))s"),
            try fixture.token(sub: "rider-1", routes: "order://taxi/ex-1", ttl: "1h")
        )
        try fixture.writeToken(short)
        let rider = try fixture.startApp(app, [
            "--server", "127.0.0.1:\(gateway.tlsPort)", "--ca-file", fixture.certificates.caFile,
            "--pin-sha256", try fixture.serverPin(), "--server-name", "localhost", "--token-file", fixture.tokenFile,
            "--order", "taxi/ex-1", "--changes", "\(Self.lifecycle.count)", "--duration", "120s",
        ])
        defer { _ = rider.terminate(timeout: .seconds(5)) }
        #expect(await exampleEventually(timeout: .seconds(30)) { rider.standardOutputText.contains("token: ") || !rider.isRunning }, "\(rider.standardErrorText)")
        try fixture.writeToken(long)

        // Past the first token's expiry, the app must be connected (refreshed, or reconnected with the new token)
        // and subscribed on its current connection before the changes are published.
        #expect(await exampleEventually(timeout: .seconds(40)) { Date().timeIntervalSince(minted) > shortTTL + 2 })
        #expect(
            await exampleEventually(timeout: .seconds(30)) { AppOutput(rider.standardOutputText).isSubscribedOnCurrentConnection || !rider.isRunning },
            "\(rider.standardOutputText)\n\(rider.standardErrorText)"
        )
        let publisher = try fixture.token(sub: "backend-1", routes: "order://taxi/*", role: "publisher")
        for state in Self.lifecycle {
            try fixture.publish(order: "ex-1", state: state, port: gateway.plainPort, token: publisher)
        }

        let status = rider.waitForExit(timeout: .seconds(60))?.exitStatus
        let output = AppOutput(rider.standardOutputText)
        #expect(status == 0, "exit \(String(describing: status))\n\(rider.standardOutputText)\n\(rider.standardErrorText)")
        for observer in ["delegate", "closure", "stream"] {
            let changes = output.changes(seenBy: observer)
            #expect(changes.map(\.state) == Self.lifecycle, "\(observer): \(changes)")
            #expect(changes.map(\.offset) == Array(1...UInt64(Self.lifecycle.count)), "\(observer): \(changes)")
        }
        #expect(output.lines.contains { $0.hasPrefix("state: connecting (attempt 1)") })
        #expect(output.lines.contains { $0.hasPrefix("state: connected to ") })
        #expect(!output.lines.contains { $0.hasPrefix("state: stopped: ") }, "\(rider.standardOutputText)")
        #expect(output.lines.last(where: { $0.hasPrefix("state: ") }) == "state: stopped by the app")
        #expect(output.lines.last == "done: \(Self.lifecycle.count) changes of order://taxi/ex-1")
        // The provider was asked again for the expiring (or, after a slow start, refused) first token.
        let tokenRequests = output.lines.filter { $0.hasPrefix("token: ") }
        #expect(tokenRequests.first?.hasPrefix("token: token for a new connection: read ") == true, "\(tokenRequests)")
        #expect(tokenRequests.dropFirst().contains { $0.contains("token expiring at ") || $0.contains("token refused") }, "\(tokenRequests)")
        #expect(gateway.process.terminate()?.exitStatus == 0, "\(gateway.process.standardErrorText)")
    }

    @Test("a pin that does not match the gateway's key stops the app with the TLS cause and exit status 1")
    func refusesAnotherKey() async throws {
        let app = try #require(ExampleBinaries.riderApp(), ExampleBinaries.missingApp)
        let fixture = try ExampleFixture()
        let gateway = try await fixture.startGateway()
        defer { _ = gateway.process.terminate() }
        try fixture.writeToken(try fixture.token(sub: "rider-1", routes: "order://taxi/ex-2", ttl: "1h"))
        let rider = try fixture.startApp(app, [
            "--server", "127.0.0.1:\(gateway.tlsPort)", "--ca-file", fixture.certificates.caFile,
            "--pin-sha256", try fixture.pin(of: fixture.certificates.clientCertificate), "--server-name", "localhost",
            "--token-file", fixture.tokenFile, "--order", "taxi/ex-2", "--changes", "1", "--duration", "60s",
        ])
        let status = rider.waitForExit(timeout: .seconds(60))?.exitStatus
        #expect(status == 1, "exit \(String(describing: status))\n\(rider.standardOutputText)\n\(rider.standardErrorText)")
        let output = AppOutput(rider.standardOutputText)
        #expect(output.lines.contains("state: stopped: TLS: certificate verify failed: public key does not match the pinned keys"), "\(rider.standardOutputText)")
        #expect(output.lines.last?.hasPrefix("done: the client stopped: TLS: ") == true, "\(rider.standardOutputText)")
        #expect(output.changes(seenBy: "stream").isEmpty)
    }
}

/// What the app printed, line by line.
struct AppOutput {
    /// One change as an observer printed it.
    struct Change: CustomStringConvertible {
        var offset: UInt64
        var state: String
        var description: String { "\(offset):\(state)" }
    }

    let lines: [String]

    init(_ text: String) { lines = text.split(separator: "\n").map(String.init) }

    /// `change order://taxi/ex-1 EPOCH:OFFSET FROM → TO [fields]` lines of one observer style.
    func changes(seenBy observer: String) -> [Change] {
        lines.compactMap { line in
            guard line.hasPrefix("\(observer): change ") else { return nil }
            let words = line.split(separator: " ")
            guard words.count >= 7, words[5] == "→", let offset = words[3].split(separator: ":").last.flatMap({ UInt64($0) }) else {
                return nil
            }
            return Change(offset: offset, state: String(words[6]))
        }
    }

    /// Whether the last `state:` line says connected and a `subscribed:` line came after the connection attempt it
    /// ends (the last `state: connecting`). The app prints states from an AsyncStream consumed by a task and
    /// subscriptions from a callback, so under load `subscribed:` may come out before that attempt's `connected`.
    var isSubscribedOnCurrentConnection: Bool {
        guard let lastState = lines.lastIndex(where: { $0.hasPrefix("state: ") }), lines[lastState].hasPrefix("state: connected") else {
            return false
        }
        let attempt = lines.lastIndex { $0.hasPrefix("state: connecting") } ?? lines.startIndex
        return lines[attempt...].contains { $0.hasPrefix("subscribed: ") }
    }
}
