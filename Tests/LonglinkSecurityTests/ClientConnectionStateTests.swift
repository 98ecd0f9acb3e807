import Foundation
import LonglinkClient
import LonglinkCore
import LonglinkGateway
import LonglinkLoop
import LonglinkOpenSSL
import LonglinkTestSupport
import Synchronization
import Testing

/// Every state a client goes through, in order, from the moment it is watched.
final class StateRecorder: Sendable {
    private let states = Mutex<[ConnectionState]>([])
    private let task: Mutex<Task<Void, Never>?> = Mutex(nil)

    init(_ client: LonglinkClient) {
        let stream = client.stateChanges()
        task.withLock { $0 = Task { [weak self] in for await state in stream { self?.append(state) } } }
    }

    private func append(_ state: ConnectionState) { states.withLock { $0.append(state) } }

    deinit { task.withLock { $0?.cancel() } }

    var all: [ConnectionState] { states.withLock { $0 } }

    /// The first recorded state matching `predicate`, waiting for it up to `timeout`.
    func first(timeout: Duration = .seconds(10), where predicate: (ConnectionState) -> Bool) async -> ConnectionState? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let state = all.first(where: predicate) { return state }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return all.first(where: predicate)
    }
}

extension ConnectionState {
    var isWaitingToRetry: Bool {
        if case .waitingToRetry = self { true } else { false }
    }
}

/// Connection state and typed failure reasons of the client library, each produced for real: a closed port, an
/// unresolvable name, refused certificates, the TLS port spoken to in plain (and the reverse), refused tokens, a
/// draining server, a full server.
@Suite("client library: observable connection state and typed failure reasons (real sockets, real TLS)", .serialized, .ownThreads)
struct ClientConnectionStateTests {
    func client(
        backend: SelectorBackend,
        host: String = "127.0.0.1",
        port: Int,
        token: String = "",
        reconnects: Bool = true
    ) throws -> LonglinkClient {
        try LonglinkClient(
            configuration: ClientConfiguration(
                host: host,
                port: port,
                token: token,
                connectTimeout: .seconds(5),
                reconnects: reconnects,
                selectorBackend: backend
            )
        )
    }

    @Test("connecting → connected → (lost) waiting to retry with the delay and reason → connecting → connected → stopped", arguments: SelectorBackend.allCases)
    func transitions(backend: SelectorBackend) async throws {
        let gateway = try SecureGateway()
        defer { gateway.stop() }
        let client = try gateway.client(.plain, backend: backend, token: gateway.token())
        let recorder = StateRecorder(client)
        #expect(await recorder.first { $0.isConnected } != nil)
        client.simulateNetworkLoss()
        let waiting = await recorder.first { $0.isWaitingToRetry }
        guard case .waitingToRetry(let attempt, let delay, let reason)? = waiting else {
            Issue.record("no waitingToRetry in \(recorder.all)")
            return
        }
        #expect(attempt == 1)
        #expect(delay <= ReconnectPolicy.foreground.bound(attempt: 0))
        #expect(reason == .connectionLost("simulated network loss"))
        #expect(!reason.isTerminal)
        #expect(await recorder.first { $0 == .connecting(attempt: 1) } != nil)
        #expect(await recorder.first { _ in recorder.all.filter(\.isConnected).count >= 2 } != nil, "connected again")
        client.close()
        #expect(await recorder.first { $0 == .stopped(nil) } != nil)
        // The order: connected, waiting, connecting again, connected again, stopped.
        let kinds = recorder.all.map { state -> String in
            switch state {
            case .idle: "idle"
            case .connecting: "connecting"
            case .connected: "connected"
            case .waitingToRetry: "waiting"
            case .stopped: "stopped"
            }
        }
        let tail = Array(kinds.drop { $0 != "connected" })
        #expect(tail.starts(with: ["connected", "waiting", "connecting", "connected"]), "\(recorder.all)")
        #expect(tail.last == "stopped")
        #expect(client.state.description == "stopped by the app")
    }

    @Test("a closed port is connection refused and an unresolvable name is host not found; both are retried", arguments: SelectorBackend.allCases)
    func unreachable(backend: SelectorBackend) async throws {
        let closed = try BoundPort()
        let refused = try client(backend: backend, port: closed.port)
        defer { refused.close() }
        let refusedStates = StateRecorder(refused)
        let waiting = await refusedStates.first { $0.isWaitingToRetry }
        #expect(waiting?.failure == .connectionRefused(host: "127.0.0.1", port: closed.port))
        #expect(waiting?.description.contains("after: connection refused by 127.0.0.1:\(closed.port)") == true)
        #expect(await refusedStates.first { $0 == .connecting(attempt: 1) } != nil, "retried")
        #expect(!refused.state.isStopped)
        do {
            try await refused.waitUntilConnected(timeout: .seconds(5), failingFast: true)
            Issue.record("connected to a closed port")
        } catch {
            #expect(error == .connectionFailed(.connectionRefused(host: "127.0.0.1", port: closed.port)))
        }

        let unknown = try client(backend: backend, host: "no-such-host.invalid", port: 7070)
        defer { unknown.close() }
        let unknownStates = StateRecorder(unknown)
        #expect(await unknownStates.first { $0.isWaitingToRetry }?.failure == .hostNotFound("no-such-host.invalid"))
        #expect(!unknown.state.isStopped)
    }

    @Test("a refused certificate stops the client with its cause: expired, name mismatch, unknown CA", arguments: SelectorBackend.allCases)
    func certificateFailures(backend: SelectorBackend) async throws {
        let gateway = try SecureGateway()
        defer { gateway.stop() }
        let trust = TLSConfiguration.client(trust: .caFile(certificates.caFile))
        let cases: [(SecureGateway.Listener, TLSConfiguration, TLSFailureCause, String)] = [
            (.expired, trust, .certificateExpired, "TLS: certificate verify failed: certificate has expired"),
            (.wrongHost, trust, .nameMismatch, "TLS: certificate verify failed: certificate is for another host name"),
            (.tls, .client(trust: .system), .unknownAuthority, "TLS: certificate verify failed: not issued by a trusted CA"),
            (.selfSigned, trust, .unknownAuthority, "TLS: certificate verify failed: not issued by a trusted CA"),
        ]
        for (listener, tls, cause, message) in cases {
            let client = try gateway.client(listener, backend: backend, token: gateway.token(), tls: tls, serverName: "localhost")
            defer { client.close() }
            let stopped = await StateRecorder(client).first { $0.isStopped }
            guard case .stopped(.tls(let failure)?)? = stopped else {
                Issue.record("\(listener): expected a TLS stop, got \(String(describing: stopped))")
                continue
            }
            #expect(failure.cause == cause, "\(listener): \(failure.detail)")
            #expect("\(failure)" == message)
            #expect(stopped?.failure?.isTerminal == true)
        }
    }

    @Test("the TLS port spoken to in plain is not Longlink; a plain port spoken to in TLS is not TLS; both retried", arguments: SelectorBackend.allCases)
    func wrongProtocol(backend: SelectorBackend) async throws {
        let gateway = try SecureGateway()
        defer { gateway.stop() }
        let plainOnTLS = try gateway.client(.tls, backend: backend, token: gateway.token())
        defer { plainOnTLS.close() }
        let plainStates = StateRecorder(plainOnTLS)
        guard case .notLonglink(let why)? = await plainStates.first(where: { $0.isWaitingToRetry })?.failure else {
            Issue.record("expected notLonglink, got \(plainStates.all)")
            return
        }
        #expect(why.contains("TLS"))
        let tlsOnPlain = try gateway.client(.plain, backend: backend, token: gateway.token(), tls: .client(trust: .caFile(certificates.caFile)), serverName: "localhost")
        defer { tlsOnPlain.close() }
        let tlsStates = StateRecorder(tlsOnPlain)
        guard case .tls(let failure)? = await tlsStates.first(where: { $0.isWaitingToRetry })?.failure else {
            Issue.record("expected a TLS failure, got \(tlsStates.all)")
            return
        }
        #expect(failure.cause == .notTLS)
        #expect("\(failure)" == "TLS: not a TLS endpoint (the server answered without TLS)")
    }

    @Test("a refused token stops the client and fails its publishes with the reason; an expired token is not retried", arguments: SelectorBackend.allCases)
    func refusedTokens(backend: SelectorBackend) async throws {
        let gateway = try SecureGateway()
        defer { gateway.stop() }
        let invalid = try gateway.client(.plain, backend: backend, token: "not-a-jwt")
        defer { invalid.close() }
        let invalidStop = await StateRecorder(invalid).first { $0.isStopped }
        guard case .stopped(.authentication(.invalidToken(let why))?)? = invalidStop else {
            Issue.record("expected an invalid-token stop, got \(String(describing: invalidStop))")
            return
        }
        #expect(why.contains("not a JWT"))
        do {
            _ = try await invalid.publish(OrderChange(orderID: OrderID("p1")!, line: .taxi, targetState: "created"))
            Issue.record("publish succeeded with a refused token")
        } catch {
            guard case .connectionFailed(.authentication(.invalidToken)) = error else {
                Issue.record("publish failed with \(error), not the token refusal")
                return
            }
        }

        let expired = try gateway.client(.plain, backend: backend, token: gateway.token(ttlSeconds: -60))
        defer { expired.close() }
        let expiredStop = await StateRecorder(expired).first { $0.isStopped }
        #expect(expiredStop == .stopped(.authentication(.tokenExpired)))
        #expect(expiredStop?.description == "stopped: token expired; connect with a fresh token")
        // Give a retry loop time to show (the old client came back within 0-250 ms, again and again).
        try await Task.sleep(for: .seconds(1))
        #expect(gateway.counters.disconnects[.tokenExpired] == 1)
        #expect(gateway.counters.disconnects[.invalidToken] == 1)
    }

    @Test("a draining server: waiting to retry after shutting down, with the server's reconnect hint as the delay", arguments: SelectorBackend.allCases)
    func drainingServer(backend: SelectorBackend) async throws {
        let gateway = try SecureGateway()
        let client = try gateway.client(.plain, backend: backend, token: gateway.token())
        defer { client.close() }
        let recorder = StateRecorder(client)
        #expect(await recorder.first { $0.isConnected } != nil)
        gateway.stop()
        let waiting = await recorder.first { $0.isWaitingToRetry }
        guard case .waitingToRetry(_, let delay, .serverShuttingDown(let hint))? = waiting else {
            Issue.record("expected shutting down, got \(recorder.all)")
            return
        }
        if let hint { #expect(delay == hint) }
        #expect(waiting?.failure?.isTerminal == false)
    }

    @Test("a full server: waiting to retry after too many connections", arguments: SelectorBackend.allCases)
    func fullServer(backend: SelectorBackend) async throws {
        let gateway = try SecureGateway(maxConnections: 1)
        defer { gateway.stop() }
        let first = try gateway.client(.plain, backend: backend, token: gateway.token())
        defer { first.close() }
        try await first.waitUntilConnected(timeout: .seconds(10))
        let second = try gateway.client(.plain, backend: backend, token: gateway.token())
        defer { second.close() }
        guard case .tooManyConnections(let hint)? = await StateRecorder(second).first(where: { $0.isWaitingToRetry })?.failure else {
            Issue.record("expected too many connections, got \(second.state)")
            return
        }
        #expect(hint == .milliseconds(1_000))
    }
}
