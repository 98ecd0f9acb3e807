import Foundation
import LonglinkClient
import LonglinkCore
import LonglinkGateway
import LonglinkLoop
import LonglinkTestSupport
import Synchronization
import Testing

/// The client library's token provider against a real gateway with JWT tokens: asked on connect, on
/// `token_expiring` (answered with `refresh`), once after a refused token; a failing provider stops the client.
@Suite(
    "client library: token provider (real gateway, real JWTs)",
    .serialized,
    .ownThreads
)
struct TokenProviderTests {
    /// What the provider was asked, in order.
    final class Requests: Sendable {
        private let list = Mutex<[TokenRequest]>([])
        func add(_ request: TokenRequest) { list.withLock { $0.append(request) } }
        var all: [TokenRequest] { list.withLock { $0 } }
    }

    /// Set once the threads held by a test may go.
    final class Released: Sendable {
        let flag = Atomic<Bool>(false)
    }

    /// An app's backend that cannot issue tokens.
    struct BackendDown: Error, CustomStringConvertible {
        var description: String { "the token service answered 503" }
    }

    func client(_ gateway: SecureGateway, backend: SelectorBackend, provider: @escaping TokenProvider) throws -> LonglinkClient {
        try LonglinkClient(
            configuration: ClientConfiguration(
                host: "127.0.0.1",
                port: gateway.port(.plain),
                tokenProvider: provider,
                connectTimeout: .seconds(5),
                selectorBackend: backend
            )
        )
    }

    @Test("asked on connect and on token_expiring; the refresh keeps the session; no record lost or duplicated", arguments: SelectorBackend.allCases)
    func refreshKeepsSession(backend: SelectorBackend) async throws {
        // The short token lives 8 s and is warned about 6 s before: long enough for the first connect on a loaded
        // machine, short enough that the test outlives it.
        let gateway = try SecureGateway(tokenWarningLeadMillis: 6_000)
        defer { gateway.stop() }
        let requests = Requests()
        let minted = Date()
        let (short, long) = (gateway.token(ttlSeconds: 8), gateway.token(ttlSeconds: 3600))
        let client = try client(gateway, backend: backend) { request in
            requests.add(request)
            if case .expiring = request { return long }
            return short
        }
        defer { client.close() }
        let states = StateRecorder(client)
        let route = Route.order(.taxi, OrderID("tp1")!)
        let offsets = Mutex<[UInt64]>([])
        let answered = SubscriptionAnswered(client, route)
        let observation = client.observe(route) { change in
            if change.kind == .change { offsets.withLock { $0.append(change.record.position.offset) } }
        }
        defer { observation.cancel() }
        #expect(await eventually { client.state.isConnected && answered.isAnswered })
        let changes = taxiChanges("tp1", count: 10)
        for change in changes.prefix(5) { try await gateway.apply(change) }
        // Past the first token's exp (8 s after it was minted, plus a tick): the session must still be the first one.
        #expect(await eventually(timeout: .seconds(20)) { Date().timeIntervalSince(minted) > 9.0 })
        for change in changes.dropFirst(5) { try await gateway.apply(change) }
        #expect(await eventually { offsets.withLock { $0.count } >= 10 })
        #expect(offsets.withLock { $0 } == Array(1...10))
        #expect(requests.all.first == .connecting)
        #expect(requests.all.contains { if case .expiring = $0 { true } else { false } })
        #expect(states.all.filter(\.isConnected).count == 1, "one session throughout: \(states.all)")
        #expect(client.state.isConnected)
        #expect(gateway.counters.disconnects[.tokenExpired] == nil)
    }

    @Test("the provider runs on the client's own thread: a cooperative pool held by blocking work does not stop the connect", arguments: SelectorBackend.allCases)
    func providerDoesNotNeedTheCooperativePool(backend: SelectorBackend) throws {
        let gateway = try SecureGateway()
        defer { gateway.stop() }
        let token = gateway.token(ttlSeconds: 3600)
        // Hold every thread of the cooperative pool (this test's own thread waits below without suspending), as an
        // app's blocking work can: a provider run as a plain task would not run until they are released.
        let released = Released()
        let blockers = ProcessInfo.processInfo.activeProcessorCount * 2
        for _ in 0..<blockers {
            Task.detached { while !released.flag.load(ordering: .acquiring) { usleep(1_000) } }
        }
        defer { released.flag.store(true, ordering: .releasing) }
        let asked = Requests()
        let client = try client(gateway, backend: backend) { request in
            asked.add(request)
            return token
        }
        defer { client.close() }
        let deadline = ContinuousClock.now + .seconds(10)
        while !client.state.isConnected && ContinuousClock.now < deadline { usleep(2_000) }
        #expect(client.state.isConnected, "state: \(client.state)")
        #expect(asked.all == [.connecting])
    }

    @Test("after token_expired the provider is asked once and the client connects with the new token", arguments: SelectorBackend.allCases)
    func refusedTokenReplaced(backend: SelectorBackend) async throws {
        let gateway = try SecureGateway()
        defer { gateway.stop() }
        let requests = Requests()
        let (expired, fresh) = (gateway.token(ttlSeconds: -60), gateway.token(ttlSeconds: 3600))
        let client = try client(gateway, backend: backend) { request in
            requests.add(request)
            if case .rejected = request { return fresh }
            return expired
        }
        defer { client.close() }
        #expect(await eventually { client.state.isConnected })
        #expect(requests.all == [.connecting, .rejected(.tokenExpired)])
    }

    @Test("a provider that fails, or returns the refused token again, stops the client with the reason", arguments: SelectorBackend.allCases)
    func providerFailures(backend: SelectorBackend) async throws {
        let gateway = try SecureGateway()
        defer { gateway.stop() }
        let failing = try client(gateway, backend: backend) { _ in throw BackendDown() }
        defer { failing.close() }
        let failed = await StateRecorder(failing).first { $0.isStopped }
        #expect(failed?.failure == .authentication(.tokenUnavailable("the token provider failed: the token service answered 503")))
        #expect(gateway.counters.disconnects.isEmpty, "no connection attempt without a token")

        let requests = Requests()
        let expired = gateway.token(ttlSeconds: -60)
        let stale = try client(gateway, backend: backend) { request in
            requests.add(request)
            return expired
        }
        defer { stale.close() }
        let stopped = await StateRecorder(stale).first { $0.isStopped }
        guard case .stopped(.authentication(.tokenUnavailable(let reason))?)? = stopped else {
            Issue.record("expected a stop for lack of a token, got \(String(describing: stopped))")
            return
        }
        #expect(reason.contains("refused token again"))
        #expect(requests.all == [.connecting, .rejected(.tokenExpired)], "asked once after the refusal, then stopped")
        #expect(gateway.counters.disconnects[.tokenExpired] == 1, "no reconnect loop with the refused token")
    }
}
