import Foundation
import Glibc
import LonglinkTestSupport
import Testing

/// `longlink serve` as a child process with a plain, a WebSocket (and optionally a WebSocket-over-TLS) listener
/// and its operations listener, all on port 0; the bound ports are read from its log. Stopped by its pid.
final class GatewayProcess {
    let process: ChildProcess
    let directory: String
    private(set) var port = 0
    private(set) var webSocketPort = 0
    private(set) var secureWebSocketPort = 0
    private(set) var adminPort = 0

    /// Starts serve with `arguments` added to the defaults (memory store, one loop, no authentication unless
    /// `secretFile` is given). `secure` adds `--wss-listen` with `certificates`' server certificate.
    init(_ arguments: [String] = [], certificates: TestCertificates? = nil, secretFile: String? = nil) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("longlink-ws-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let binary = try #require(Self.executable(), "the longlink executable is not built; run `swift build`")
        var all = [
            "serve", "--listen", "127.0.0.1:0", "--ws-listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0",
            "--store", "memory", "--loops", "1", "--drain-period", "300ms", "--log-level", "debug", "--log-format", "text",
        ]
        if let secretFile { all += ["--secret-file", secretFile] } else { all.append("--insecure-dev") }
        if let certificates {
            all += ["--wss-listen", "127.0.0.1:0", "--tls-cert", certificates.serverCertificate, "--tls-key", certificates.serverKey]
        }
        process = try ChildProcess(binary, all + arguments, standardError: directory + "/serve.err")
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline && process.isRunning {
            let text = log
            port = Self.number(after: "serving on 127.0.0.1:", in: text) ?? 0
            webSocketPort = Self.number(after: "WebSocket on ws://127.0.0.1:", in: text) ?? 0
            secureWebSocketPort = Self.number(after: "wss://127.0.0.1:", in: text) ?? 0
            adminPort = Self.number(after: "operations: http://127.0.0.1:", in: text) ?? 0
            if port > 0 && webSocketPort > 0 && adminPort > 0 && (certificates == nil || secureWebSocketPort > 0) { return }
            usleep(20_000)
        }
        stop()
        throw GatewayProcessError(description: "longlink serve did not start: \(log)")
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// What the gateway logged so far.
    var log: String { (try? String(contentsOfFile: directory + "/serve.err", encoding: .utf8)) ?? "" }

    var isRunning: Bool { process.isRunning }

    /// SIGTERM (a drain), then SIGKILL if it has not exited within `grace`.
    func stop(grace: Duration = .seconds(10)) { _ = process.terminate(timeout: grace) }

    /// Sends SIGTERM without waiting.
    func terminate() { process.signal(SIGTERM) }

    /// A GET or POST to the operations listener (the admin API accepts any token in --insecure-dev).
    func admin(_ method: String, _ path: String, body: String? = nil, token: String = "dev") throws -> HTTPTestResponse {
        try HTTPTestClient.fetch(port: adminPort, method, path, headers: [("Authorization", "Bearer \(token)")], body: body)
    }

    static func number(after marker: String, in text: String) -> Int? {
        guard let range = text.range(of: marker) else { return nil }
        return Int(String(text[range.upperBound...].prefix { $0.isNumber }))
    }

    /// The `longlink` executable built next to the test binary, or under the package's `.build/debug/`.
    static func executable() -> String? {
        var candidates: [String] = []
        if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            candidates.append(URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent("longlink").path)
        }
        candidates.append(packageRoot + "/.build/debug/longlink")
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// The package's root directory.
    static var packageRoot: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
    }
}

struct GatewayProcessError: Error, CustomStringConvertible {
    let description: String
}
