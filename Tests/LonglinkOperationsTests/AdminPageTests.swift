import Foundation
import Glibc
import LonglinkCore
import LonglinkTestSupport
import Testing

@Suite("Admin page in a real headless browser (Debian's chromium)", .serialized, .ownThreads)
struct AdminPageTests {
    let route = Route.order(.taxi, OrderID("8812")!)

    @Test("the page renders connections, top routes, an order's history and tapped changes; a screenshot is saved")
    func pageInChromium() throws {
        let harness = try GatewayHarness(operations: true)
        defer { harness.stop() }
        let peer = try FramePeer(port: harness.port)
        let connected = try #require(try peer.handshake(token: "rider-token"))
        _ = try peer.subscribe(route)
        let port = harness.adminPort
        for body in [
            #"{"order":"8812","line":"taxi","state":"created"}"#,
            #"{"order":"8812","line":"taxi","state":"dispatching"}"#,
            #"{"order":"8812","line":"taxi","state":"driver_assigned","driver_id":"d-42","eta_seconds":240}"#,
        ] {
            #expect(try HTTPTestClient.fetch(port: port, "POST", "/admin/publish", headers: adminAuth, body: body).status == 200)
        }
        let address = "http://127.0.0.1:\(port)/admin#token=dev&order=taxi/8812"

        let dom = try Chromium.run(["--dump-dom", address])
        #expect(dom.contains("<title>longlink admin</title>"))
        #expect(Self.count(of: "class=\"history-row\"", in: dom) == 3, "order history rows missing:\n\(dom.suffix(4_000))")
        #expect(dom.contains("order://taxi/8812 is driver_assigned"))
        #expect(dom.contains("dispatching → driver_assigned"))
        #expect(dom.contains("driver_id=d-42 eta_seconds=240"))
        #expect(dom.contains("subscribed now: 1 connection(s), 1 user(s) dev via "), "presence of the order missing")
        #expect(Self.count(of: "class=\"tap-row\"", in: dom) == 3, "tapped changes missing")
        #expect(dom.contains("class=\"connection-row\"><td>\(connected.clientID)</td>"), "connection list missing")
        #expect(dom.contains("<code>order://taxi/8812</code></td><td>1</td>"), "top routes missing")
        #expect(dom.contains("id=\"stat-connections\">1<"))
        #expect(dom.contains("id=\"stat-publishes\">3<"))
        #expect(dom.contains("class=\"state ready\""))

        let directory = Self.outputDirectory()
        let screenshot = directory.appendingPathComponent("admin-page.png")
        try? FileManager.default.removeItem(at: screenshot)
        _ = try Chromium.run(["--screenshot=\(screenshot.path)", "--window-size=1400,1100", address])
        let png = try Data(contentsOf: screenshot)
        #expect(Array(png.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        #expect(png.count > 20_000)
    }

    /// `<package>/.build/test-output/`, where the screenshot is left for people to look at.
    static func outputDirectory() -> URL {
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let directory = package.appendingPathComponent(".build/test-output")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    static func count(of needle: String, in text: String) -> Int {
        text.components(separatedBy: needle).count - 1
    }
}

/// Runs Debian's chromium headless, bounded in time and killed by its PID when it overstays.
enum Chromium {
    static let path = "/usr/bin/chromium"

    /// Runs chromium with `arguments` (after the headless set-up) and returns its standard output.
    static func run(_ arguments: [String], seconds: Double = 90) throws -> String {
        let profile = FileManager.default.temporaryDirectory.appendingPathComponent("longlink-chromium-\(UUID().uuidString)")
        let stdout = profile.path + ".stdout"
        defer {
            try? FileManager.default.removeItem(at: profile)
            try? FileManager.default.removeItem(atPath: stdout)
        }
        let process = try ChildProcess(
            path,
            [
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                "--disable-extensions", "--disable-background-networking", "--user-data-dir=\(profile.path)",
                "--virtual-time-budget=5000",
            ] + arguments,
            standardOutput: stdout
        )
        guard let termination = process.waitForExit(timeout: .milliseconds(Int(seconds * 1000))) else {
            throw HTTPTestError("chromium did not finish within \(seconds) s; killed pid \(process.pid)")
        }
        guard termination == .exited(0) else { throw HTTPTestError("chromium exited with \(termination)") }
        return process.standardOutputText
    }
}
