import Foundation
import LonglinkTestSupport
import Testing

/// A real browser: headless Chromium loads the example page (served by the gateway's operations listener) and
/// follows one order through the WebSocket transport while the test publishes its lifecycle, cuts the connection
/// mid-stream (a TCP proxy dies: no close frame), refuses reconnects for a while, and has an operator disconnect
/// it. Every state must arrive once and in order. The same over `wss`, with Chromium told to accept the test
/// certificate by its public key hash (`--ignore-certificate-errors-spki-list`).
@Suite("a real browser (headless Chromium) follows an order over WebSocket with recovery", .serialized, .ownThreads)
struct BrowserTests {
    /// A taxi order's whole life: (state, driver id).
    static let lifecycle: [(String, String?)] = [
        ("created", nil), ("dispatching", nil), ("driver_assigned", "d-7"), ("driver_arriving", nil),
        ("driver_arrived", nil), ("in_trip", nil), ("completed", nil), ("paid", nil),
    ]

    /// The base64 SHA-256 of a certificate's public key (what `--ignore-certificate-errors-spki-list` takes).
    static func spkiHash(_ certificate: String) throws -> String {
        let output = try ProcessRunner.run([
            "sh", "-c",
            "openssl x509 -in '\(certificate)' -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64",
        ])
        return String(decoding: output.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func publish(_ gateway: GatewayProcess, order: String, _ index: Int) throws {
        let (state, driver) = lifecycle[index]
        let body = #"{"order":"\#(order)","line":"taxi","state":"\#(state)""# + (driver.map { #","driver_id":"\#($0)""# } ?? "") + "}"
        let response = try gateway.admin("POST", "/admin/publish", body: body)
        #expect(response.status == 200, "publish \(state): \(response.text)")
    }

    /// The offsets the page has shown.
    static func offsets(_ browser: Chromium) -> [Int] { browser.changes.compactMap { $0["offset"] as? Int } }

    func follow(secure: Bool) throws {
        let certificates = secure ? try TestCertificates() : nil
        let gateway = try GatewayProcess(certificates: certificates)
        let proxy = try TCPProxy(upstreamPort: secure ? gateway.secureWebSocketPort : gateway.webSocketPort)
        defer { proxy.stop() }
        let order = secure ? "browser-wss" : "browser-ws"
        let server = "\(secure ? "wss" : "ws")://127.0.0.1:\(proxy.port)/longlink"
        var arguments: [String] = []
        if let certificates { arguments.append("--ignore-certificate-errors-spki-list=\(try Self.spkiHash(certificates.serverCertificate))") }
        let browser = try Chromium(url: "http://127.0.0.1:\(gateway.adminPort)/example#server=\(server)&order=taxi/\(order)", arguments: arguments)
        defer { browser.stop() }

        // The page's subscription reaches the gateway: its connection is listed with the route.
        var listed = false
        let deadline = ContinuousClock.now + .seconds(30)
        while !listed && ContinuousClock.now < deadline {
            listed = (try? gateway.admin("GET", "/admin/connections?filter=order://taxi/\(order)").text.contains("longlink-example")) ?? false
            if !listed { usleep(100_000) }
        }
        try #require(listed, "the page never subscribed; its console:\n\(browser.events)\n\(browser.log.suffix(3000))\n\(gateway.log.suffix(2000))")
        let transport = secure ? "wss" : "ws"
        #expect(try gateway.admin("GET", "/admin/connections").text.contains(#""transport":"\#(transport)""#))

        for index in 0..<3 { try Self.publish(gateway, order: order, index) }
        #expect(browser.waitFor { Self.offsets($0).last == 3 }, "\(browser.changes)")

        // The connection dies mid-stream and reconnects are refused while two records are stored.
        proxy.pause()
        proxy.cut()
        #expect(browser.waitFor { $0.states.last == "waiting" }, "\(browser.states)")
        for index in 3..<5 { try Self.publish(gateway, order: order, index) }
        let refusedBefore = proxy.acceptedCount
        #expect(browser.waitFor { _ in proxy.acceptedCount > refusedBefore }, "the page retries while refused")
        proxy.resume()
        #expect(browser.waitFor { Self.offsets($0).last == 5 }, "resumed with what it missed: \(browser.changes)")
        try Self.publish(gateway, order: order, 5)
        #expect(browser.waitFor { Self.offsets($0).last == 6 })

        // An operator disconnects it (the disconnect frame and close 3007); it comes back by itself.
        let list = try gateway.admin("GET", "/admin/connections?filter=order://taxi/\(order)").text
        let id = try #require(list.firstRange(of: #/"id":"(c\d+)"/#).map { String(list[$0]).split(separator: "\"")[2] }, "\(list)")
        #expect(try gateway.admin("POST", "/admin/connections/\(id)/disconnect", body: "{}").status == 200)
        for index in 6..<8 { try Self.publish(gateway, order: order, index) }
        #expect(browser.waitFor { Self.offsets($0).last == 8 }, "\(browser.changes)")

        // Every state once, in order, each a change (the order had no record when the page subscribed).
        let changes = browser.changes
        #expect(Self.offsets(browser) == Array(1...8), "\(changes)")
        #expect(changes.compactMap { $0["state"] as? String } == Self.lifecycle.map(\.0))
        #expect(changes.allSatisfy { $0["kind"] as? String == "change" })
        #expect(changes.dropFirst(2).allSatisfy { $0["driver"] as? String == "d-7" }, "the driver stays on the snapshot")
        let codes = browser.events.compactMap { $0["type"] as? String == "state" ? $0["code"] as? Int : nil }
        #expect(codes.contains(3007), "the operator's disconnect reached the page: \(browser.events)")
        #expect(browser.states.filter { $0 == "connected" }.count >= 3, "\(browser.states)")
        #expect(browser.states.last == "connected")
    }

    @Test("over ws: the page follows an order's whole life through a cut connection, refused reconnects and an operator disconnect")
    func plain() throws { try follow(secure: false) }

    @Test("over wss: the same, with Chromium accepting the test certificate by its public key hash")
    func secure() throws { try follow(secure: true) }

    @Test("the admin page follows the order it shows and taps an exact route over its own WebSocket connection")
    func adminPage() throws {
        let gateway = try GatewayProcess()
        let order = "admin-live"
        for index in 0..<2 { try Self.publish(gateway, order: order, index) }
        let route = "order://taxi/\(order)"
        let browser = try Chromium(url: "http://127.0.0.1:\(gateway.adminPort)/admin#token=dev&order=taxi/\(order)&tap=\(route)")
        defer { browser.stop() }
        let admin = { (browser: Chromium) in browser.events(prefix: "longlink-admin") }
        #expect(browser.waitFor { admin($0).contains { $0["type"] as? String == "state" && $0["name"] as? String == "connected" } },
                "\(browser.log.suffix(3000))")
        // The page's own connection: a WebSocket client of the gateway, subscribed to the order it shows.
        var list = ""
        let deadline = ContinuousClock.now + .seconds(20)
        while !list.contains("longlink-admin") && ContinuousClock.now < deadline {
            list = (try? gateway.admin("GET", "/admin/connections?filter=\(route)").text) ?? ""
            if !list.contains("longlink-admin") { usleep(100_000) }
        }
        #expect(list.contains("longlink-admin") && list.contains(#""transport":"ws""#), "\(list)")
        #expect(browser.waitFor { admin($0).contains { $0["type"] as? String == "order" && $0["kind"] as? String == "snapshot" } })
        for index in 2..<4 { try Self.publish(gateway, order: order, index) }
        #expect(browser.waitFor { admin($0).filter { $0["type"] as? String == "tap" }.count == 2 }, "\(admin(browser))")
        #expect(browser.waitFor { admin($0).filter { $0["type"] as? String == "order" && $0["kind"] as? String == "change" }.count == 2 })
        let taps = admin(browser).filter { $0["type"] as? String == "tap" }
        #expect(taps.compactMap { $0["offset"] as? Int } == [3, 4])
        #expect(taps.compactMap { $0["state"] as? String } == ["driver_assigned", "driver_arriving"])
        let orderChanges = admin(browser).filter { $0["type"] as? String == "order" && $0["kind"] as? String == "change" }
        #expect(orderChanges.compactMap { $0["offset"] as? Int } == [3, 4])
    }
}
