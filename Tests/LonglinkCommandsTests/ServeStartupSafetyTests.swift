import Foundation
import Glibc
import LonglinkCore
import LonglinkJSON
import LonglinkTestSupport
import Testing

/// `longlink serve` as a child process whose start may fail or hang: its stderr goes to a file the test polls,
/// and nothing waits for the banner unless asked.
final class ServeChild {
    let output = OutputCollector()
    let process: ChildProcess

    init(_ arguments: [String]) throws {
        let binary = try #require(longlinkExecutable(), "longlink is not built")
        process = try ChildProcess(binary, ["serve"] + arguments, standardError: output.path)
    }

    /// The number after `prefix` in stderr (a port in the banner), once it appears.
    func number(after prefix: String, seconds: Double = 20) -> Int? { output.waitForMatch(after: prefix, seconds: seconds) }

    /// Sends `signal` to the process.
    func send(_ signal: CInt) { process.signal(signal) }

    /// Waits for the exit: its status (128 + the signal if one ended it), or nil if it still runs after `seconds`
    /// (then it is killed).
    func exitStatus(within seconds: Double) -> Int32? {
        process.waitForExit(timeout: .milliseconds(Int(seconds * 1000)))?.shellStatus
    }
}

@Suite("serve: a port shared with nobody, signals honoured while starting (real processes)", .serialized, .ownThreads)
struct ServeStartupSafetyTests {
    static let base = ["--store", "memory", "--insecure-dev", "--drain-period", "200ms", "--log-level", "info"]

    @Test("a second serve on a running gateway's ports refuses with 'address already in use'; the first keeps its loops")
    func secondGatewayRefused() throws {
        let certificates = try TestCertificates()
        let tls = ["--tls-cert", certificates.serverCertificate, "--tls-key", certificates.serverKey]
        let first = try ServeChild(
            Self.base + tls + ["--listen", "127.0.0.1:0", "--tls-listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", "--loops", "2"]
        )
        let port = try #require(first.number(after: "serving on 127.0.0.1:"), "first serve did not start: \(first.output.text)")
        let tlsPort = try #require(first.number(after: "TLS on 127.0.0.1:"), "\(first.output.text)")
        let operations = try #require(first.number(after: "operations: http://127.0.0.1:"), "\(first.output.text)")

        // The plain port (the one port 0 gave the first), the TLS port, the operations port: each is refused.
        for (what, arguments) in [
            ("plain", ["--listen", "127.0.0.1:\(port)", "--metrics-listen", "127.0.0.1:0"]),
            ("tls", tls + ["--listen", "127.0.0.1:0", "--tls-listen", "127.0.0.1:\(tlsPort)", "--metrics-listen", "127.0.0.1:0"]),
            ("operations", ["--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:\(operations)"]),
        ] {
            let second = try ServeChild(Self.base + arguments + ["--loops", "2"])
            let status = second.exitStatus(within: 20)
            #expect(status != nil && status != 0, "\(what): a second gateway must not start: \(second.output.text)")
            #expect(second.output.text.contains("address already in use"), "\(what): \(second.output.text)")
            #expect(!second.output.text.contains("serving on"), "\(what): \(second.output.text)")
        }

        // The first still spreads clients over both of its loops (SO_REUSEPORT among its own sockets).
        var peers: [FramePeer] = []
        for _ in 0..<24 {
            let peer = try FramePeer(port: port)
            #expect(try peer.handshake(token: "t") != nil)
            peers.append(peer)
        }
        let response = try HTTPTestClient.fetch(
            port: operations, "GET", "/admin/connections", headers: [("Authorization", "Bearer dev")]
        )
        let connections = try JSONValue.parse(response.text)["connections"]?.arrayValue ?? []
        #expect(connections.count == 24, "\(response.text)")
        let loops = Set(connections.compactMap { $0["loop"]?.intValue })
        #expect(loops == [0, 1], "connections by loop: \(response.text)")
        peers.removeAll()
        #expect(first.process.isRunning)
        first.send(SIGTERM)
        #expect(first.exitStatus(within: 20) == 0)
    }

    @Test(
        "SIGTERM and SIGINT end serve at once while it waits for an unreachable Redis (exit 0, nothing served)",
        arguments: [SIGTERM, SIGINT]
    )
    func signalWhileWaitingForRedis(_ signal: CInt) throws {
        // Bound without listening: connecting is refused, and no parallel test can take the port meanwhile.
        let closed = try BoundPort()
        let child = try ServeChild(
            Self.base.filter { $0 != "memory" && $0 != "--store" }
                + ["--store", "redis://127.0.0.1:\(closed.port)", "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0"]
        )
        // Past the first failed attempts, in the back-off between retries.
        #expect(child.output.waitFor("(attempt 2)", seconds: 20), "\(child.output.text)")
        let sent = ContinuousClock.now
        child.send(signal)
        let status = child.exitStatus(within: 10)
        let took = ContinuousClock.now - sent
        #expect(status == 0, "exit status \(String(describing: status)) after \(took): \(child.output.text)")
        #expect(child.output.text.contains("while starting"), "\(child.output.text)")
        #expect(!child.output.text.contains("serving on"))
    }
}
