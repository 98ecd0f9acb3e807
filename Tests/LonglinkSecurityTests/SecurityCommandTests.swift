import Foundation
import LonglinkCommands
import LonglinkCore
import LonglinkGateway
import LonglinkOpenSSL
import LonglinkTestSupport
import Testing

@Suite("CLI: token, secure serve, client TLS options", .ownThreads)
struct SecurityCommandTests {
    func run(_ arguments: [String], environment: [String: String] = [:]) async -> (Int32, CommandIO) {
        let io = CommandIO.capturing()
        let code = await LonglinkCLI.main(arguments: arguments, environment: environment, io: io)
        return (code, io)
    }

    @Test("longlink token mints a token the gateway's authorizer accepts, with the secret from a file or the environment")
    func token() async throws {
        let file = certificates.path("secret-\(UInt32.random(in: 0...UInt32.max))")
        try Data((String(decoding: testSecret, as: UTF8.self) + "\n").utf8).write(to: URL(fileURLWithPath: file))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file)
        let arguments = ["token", "--sub", "rider-9", "--routes", "order://taxi/8812,order://food/*", "--role", "publisher", "--ttl", "10m"]
        let (code, io) = await run(arguments + ["--secret-file", file])
        #expect(code == 0, "\(io.capturedErr)")
        #expect(io.capturedErr.isEmpty)
        let token = io.capturedOut.trimmingCharacters(in: .whitespacesAndNewlines)
        let claims = try JWTAuthorizer(secret: testSecret).verify(token, nowMillis: UInt64(Date().timeIntervalSince1970 * 1000))
        #expect(claims.subject == "rider-9")
        #expect(claims.role == .publisher)
        #expect(claims.routes.map(\.description) == ["order://taxi/8812", "order://food/*"])
        #expect(claims.expiresAt > UInt64(Date().timeIntervalSince1970) + 500)
        let (envCode, envIO) = await run(arguments, environment: ["LONGLINK_SECRET": String(decoding: testSecret, as: UTF8.self)])
        #expect(envCode == 0)
        #expect(try JWTAuthorizer(secret: testSecret).verify(envIO.capturedOut.trimmingCharacters(in: .whitespacesAndNewlines), nowMillis: 0).subject == "rider-9")
    }

    @Test("without a secret, token and serve refuse to run; a short secret is refused")
    func noSecret() async throws {
        let (tokenCode, tokenIO) = await run(["token", "--sub", "a"])
        #expect(tokenCode == 2)
        #expect(tokenIO.capturedErr.contains("no secret"))
        let (serveCode, serveIO) = await run(["serve", "--store", "memory", "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0"])
        #expect(serveCode == 2)
        #expect(serveIO.capturedErr.contains("--insecure-dev"))
        let (shortCode, shortIO) = await run(["token", "--sub", "a"], environment: ["LONGLINK_SECRET": "short"])
        #expect(shortCode == 2)
        #expect(shortIO.capturedErr.contains("at least 32"))
        #expect(!shortIO.capturedErr.contains("short\n"))
    }

    @Test("serve applies the documented limits by default, and every one is configurable")
    func serveLimits() throws {
        let defaults = try ServeConfiguration(options: OptionResolver(specs: ServeOptions.specs).resolve(arguments: [], environment: [:]))
        #expect(defaults.security.admission == AdmissionLimits())
        #expect(defaults.security.admission.connectionsPerSecond == 1_000)
        #expect(defaults.security.admission.maxConnectionsPerAddress == 1_000)
        #expect(defaults.security.publishRate == 1_000)
        let custom = try ServeConfiguration(
            options: OptionResolver(specs: ServeOptions.specs).resolve(
                arguments: ["--connection-rate", "5", "--connection-burst", "6", "--max-connections-per-address", "7", "--handshake-budget", "8"],
                environment: ["LONGLINK_PUBLISH_RATE": "9", "LONGLINK_PUBLISH_BURST": "10"]
            )
        )
        #expect(custom.security.admission == AdmissionLimits(connectionsPerSecond: 5, connectionBurst: 6, maxConnectionsPerAddress: 7, handshakesPerIteration: 8))
        #expect(custom.security.publishRate == 9 && custom.security.publishBurst == 10)
        #expect(throws: CommandLineError.self) {
            _ = try ServeConfiguration(options: OptionResolver(specs: ServeOptions.specs).resolve(arguments: ["--tls-listen", "127.0.0.1:0"], environment: [:]))
        }
    }

    @Test("publish over TLS with --ca-file and a publisher token; --insecure warns")
    func publishOverTLS() async throws {
        let gateway = try SecureGateway()
        defer { gateway.stop() }
        let environment = ["LONGLINK_TOKEN": gateway.token("backend", role: .publisher, routes: ["order://taxi/*"])]
        let (code, io) = await run(
            [
                "publish", "--order", "cli1", "--line", "taxi", "--state", "created", "--server", "127.0.0.1:\(gateway.port(.tls))",
                "--ca-file", certificates.caFile, "--server-name", "localhost",
            ],
            environment: environment
        )
        #expect(code == 0, "\(io.capturedErr)")
        #expect(io.capturedOut.contains("stored order://taxi/cli1"))
        let (insecureCode, insecureIO) = await run(
            ["publish", "--order", "cli2", "--line", "taxi", "--state", "created", "--server", "127.0.0.1:\(gateway.port(.selfSigned))", "--insecure"],
            environment: environment
        )
        #expect(insecureCode == 0, "\(insecureIO.capturedErr)")
        #expect(insecureIO.capturedErr.contains("WARNING: --insecure"))
        let (refusedCode, refusedIO) = await run(
            [
                "publish", "--order", "cli3", "--line", "taxi", "--state", "created", "--server", "127.0.0.1:\(gateway.port(.selfSigned))",
                "--ca-file", certificates.caFile, "--timeout", "1s",
            ],
            environment: environment
        )
        #expect(refusedCode == 4, "a refused certificate is exit code 4: \(refusedIO.capturedErr)")
        #expect(refusedIO.capturedErr.contains("TLS: certificate verify failed: not issued by a trusted CA"))
    }
}
