import Foundation
import LonglinkTestSupport
import Testing

/// Where the executables the example tests run are.
enum ExampleBinaries {
    /// The package root (three levels above this file).
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// `LONGLINK_EXAMPLE_BINARY`, else `Examples/RiderApp/.build/debug/rider-app` (what `make example-build` builds).
    static func riderApp() -> String? {
        let path = ProcessInfo.processInfo.environment["LONGLINK_EXAMPLE_BINARY"] ?? packageRoot + "/Examples/RiderApp/.build/debug/rider-app"
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }

    static let missingApp: Comment = "the example app is not built: run `make example-build` (swift build --package-path Examples/RiderApp)"

    /// The `longlink` built next to this test binary, or under `.build/debug/`.
    static func longlink() -> String? {
        var candidates: [String] = []
        if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            candidates.append((executable as NSString).deletingLastPathComponent + "/longlink")
        }
        candidates.append(packageRoot + "/.build/debug/longlink")
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}

/// A throwaway CA and server certificate (openssl), a JWT secret, a token file, and `longlink serve` with a plain
/// and a TLS listener on port 0.
final class ExampleFixture {
    let certificates: TestCertificates
    let directory: String
    let longlink: String
    var secretFile: String { directory + "/secret" }
    var tokenFile: String { directory + "/token" }

    init() throws {
        longlink = try #require(ExampleBinaries.longlink(), "the longlink executable is not built")
        certificates = try TestCertificates()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("longlink-example-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try String(repeating: "example-secret-", count: 4).write(toFile: secretFile, atomically: true, encoding: .utf8)
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    /// A running gateway and its two ports.
    struct Gateway {
        let process: ChildProcess
        let plainPort: Int
        let tlsPort: Int
    }

    /// `longlink serve` on the memory store with tokens checked against the secret; returns once both ports are known.
    func startGateway() async throws -> Gateway {
        let process = try ChildProcess(
            longlink,
            [
                "serve", "--store", "memory", "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0",
                "--tls-listen", "127.0.0.1:0", "--tls-cert", certificates.serverCertificate, "--tls-key", certificates.serverKey,
                "--secret-file", secretFile, "--log-format", "text",
            ],
            standardOutput: directory + "/gateway.out",
            standardError: directory + "/gateway.err"
        )
        var ports: (Int, Int)?
        _ = await exampleEventually(timeout: .seconds(30)) {
            ports = Self.ports(in: process.standardErrorText)
            return ports != nil || !process.isRunning
        }
        guard let (plain, tls) = ports else {
            _ = process.terminate()
            throw FixtureError("longlink serve did not start: \(process.standardErrorText)")
        }
        return Gateway(process: process, plainPort: plain, tlsPort: tls)
    }

    /// The ports in `serving on 127.0.0.1:P and TLS on 127.0.0.1:T`.
    static func ports(in banner: String) -> (Int, Int)? {
        func number(after prefix: String) -> Int? {
            guard let range = banner.range(of: prefix) else { return nil }
            return Int(banner[range.upperBound...].prefix { $0.isNumber })
        }
        guard let plain = number(after: "serving on 127.0.0.1:"), let tls = number(after: " and TLS on 127.0.0.1:") else { return nil }
        return (plain, tls)
    }

    /// A token minted with `longlink token`.
    func token(sub: String, routes: String, role: String = "subscriber", ttl: String = "1h") throws -> String {
        let output = try run(["token", "--secret-file", secretFile, "--sub", sub, "--routes", routes, "--role", role, "--ttl", ttl])
        return String(decoding: output.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The example app with `arguments`, its stdout and stderr in files of the fixture's directory.
    func startApp(_ app: String, _ arguments: [String]) throws -> ChildProcess {
        try ChildProcess(app, arguments, standardOutput: directory + "/app.out", standardError: directory + "/app.err")
    }

    /// Replaces the token file in one step (written beside it, then renamed), as an app's login flow would.
    func writeToken(_ token: String) throws {
        try (token + "\n").write(toFile: tokenFile, atomically: true, encoding: .utf8)
    }

    /// `longlink publish` of one change on the plain listener.
    func publish(order: String, state: String, port: Int, token: String) throws {
        var arguments = ["publish", "--order", order, "--line", "taxi", "--state", state, "--server", "127.0.0.1:\(port)"]
        if state == "driver_assigned" { arguments += ["--driver", "d-7"] }
        _ = try run(arguments, environment: ["LONGLINK_TOKEN": token])
    }

    /// The SHA-256 of the server certificate's SubjectPublicKeyInfo, in hex (the app's `--pin-sha256`).
    func serverPin() throws -> String { try pin(of: certificates.serverCertificate) }

    /// The SPKI SHA-256 of `certificate`, as an app team computes its pin.
    func pin(of certificate: String) throws -> String {
        let script = "openssl x509 -in '\(certificate)' -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -r"
        let output = try ProcessRunner.run(["sh", "-c", script], timeout: .seconds(60))
        let hex = String(String(decoding: output.stdout, as: UTF8.self).prefix(64))
        guard output.status == 0, hex.count == 64 else { throw FixtureError("openssl printed \(output.text)") }
        return hex
    }

    /// Runs `longlink arguments…` to its end; throws unless it exits 0.
    private func run(_ arguments: [String], environment: [String: String] = [:]) throws -> ProcessRunner.Output {
        let inherited = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = try ProcessRunner.run([longlink] + arguments, environment: inherited, timeout: .seconds(60))
        guard output.status == 0 else { throw FixtureError("longlink \(arguments.prefix(1).joined()) exited \(output.status): \(output.stderr)") }
        return output
    }
}

/// Polls `condition` every 20 ms until it holds or `timeout` passes; whether it held.
func exampleEventually(timeout: Duration = .seconds(10), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return condition()
}

/// The fixture could not be set up.
struct FixtureError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
