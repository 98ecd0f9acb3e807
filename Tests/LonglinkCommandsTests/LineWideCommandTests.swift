import Foundation
import LonglinkCommands
import LonglinkTestSupport
import Testing

/// `longlink subscribe 'order://taxi/*'` (the Swift client library underneath) against a real gateway process with
/// real tokens: a console token covering the line sees every taxi order's changes; a rider's token is refused.
@Suite("longlink subscribe order://taxi/* end to end", .serialized, .ownThreads)
struct LineWideCommandTests {
    func token(_ secretFile: String, sub: String, role: String, routes: String) async throws -> String {
        let (code, io) = await run(["token", "--secret-file", secretFile, "--sub", sub, "--role", role, "--routes", routes, "--ttl", "10m"])
        try #require(code == 0, "token: \(io.capturedErr)")
        return io.capturedOut.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("a dispatch console follows every order of the line; a token for one order cannot")
    func console() async throws {
        let directory = try TemporaryDirectory()
        let secretFile = "\(directory.path)/secret"
        try String(repeating: "s3cr3t-", count: 8).write(toFile: secretFile, atomically: true, encoding: .utf8)
        let server = try ServerProcess(["--store", "memory", "--drain-period", "200ms", "--secret-file", secretFile, "--loops", "2"])
        try #require(server.port > 0, "server did not start")
        defer { _ = server.terminate() }
        let address = "127.0.0.1:\(server.port)"
        let console = try await token(secretFile, sub: "dispatch", role: "subscriber", routes: "order://taxi/*")
        let rider = try await token(secretFile, sub: "rider-1", role: "subscriber", routes: "order://taxi/61")
        let publisher = try await token(secretFile, sub: "backend", role: "publisher", routes: "order://*")

        let followIO = CommandIO.capturing()
        async let followed = LonglinkCLI.main(
            arguments: ["subscribe", "order://taxi/*", "--server", address, "--count", "4", "--json", "--duration", "60s", "--token", console],
            environment: [:], io: followIO
        )
        let (denied, deniedIO) = await run(["subscribe", "order://taxi/*", "--server", address, "--count", "1", "--duration", "1s", "--token", rider])
        #expect(denied != 0)
        #expect(deniedIO.capturedErr.contains("permission_denied(403)"), "\(deniedIO.capturedErr)")
        // A line-wide subscription is live-only: publish once the console says its subscription is active.
        let active = await eventually(timeout: .seconds(60)) { followIO.capturedErr.contains("subscribed to order://taxi/* (live only)") }
        try #require(active, "the console's subscription never became active: \(followIO.capturedErr)")
        for (order, line, state) in [("61", "taxi", "created"), ("62", "taxi", "created"), ("71", "express", "created"), ("61", "taxi", "dispatching"), ("62", "taxi", "dispatching")] {
            let (code, io) = await run(["publish", "--order", order, "--line", line, "--state", state, "--server", address, "--token", publisher])
            #expect(code == 0, "\(io.capturedErr)")
        }
        let code = await followed
        #expect(code == 0, "\(followIO.capturedErr)")
        let lines = followIO.capturedOut.split(separator: "\n").map(String.init)
        #expect(lines.count == 4, "\(lines)")
        #expect(lines.filter { $0.contains("order://taxi/61") }.count == 2, "\(lines)")
        #expect(lines.filter { $0.contains("order://taxi/62") }.count == 2, "\(lines)")
        #expect(!lines.contains { $0.contains("express") }, "\(lines)")
        let created = lines.firstIndex { $0.contains("taxi/61") && $0.contains("\"to\":\"created\"") }
        let dispatching = lines.firstIndex { $0.contains("taxi/61") && $0.contains("\"to\":\"dispatching\"") }
        #expect(created != nil && dispatching != nil && created! < dispatching!, "\(lines)")
    }
}

