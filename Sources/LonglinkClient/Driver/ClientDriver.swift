import LonglinkCore
import Glibc
import LonglinkLoop
import Synchronization

/// The loop side of a `LonglinkClient`: one connection at a time, reconnecting with backoff, feeding frames
/// through `ClientSession` and carrying out what it says. Loop-confined; the handle posts work here.
final class ClientDriver: SelectorHandler {
    /// A publish waiting for its result (kept across reconnects; resent with the same idempotency key).
    struct PendingPublish {
        var request: PublishRequest
        var deadlineMillis: UInt64
        var completion: @Sendable (Result<PublishReceipt, ClientError>) -> Void
        var sentOnConnection: Int?
    }

    let context: LoopContext
    let shared: ClientShared
    var session: ClientSession
    private var transport: (any Transport)?
    private var registration: RegistrationID?
    private var inbound = ByteBuffer()
    private var outbound = OutboundQueue()
    private var encodeScratch = ByteBuffer(capacity: 1024)
    private var attempt = 0
    private var connectionNumber = 0
    private(set) var isConnected = false
    /// The transport finished its own set-up (TCP connect, TLS handshake) on the current connection.
    private var transportReady = false
    /// Bytes arrived on the current connection (a silent close before `connected` means "not Longlink").
    private var receivedBytes = false
    /// The token the current connection's `connect` carried: a token refusal stops the client unless the app has
    /// given another one since.
    private var connectToken = ""
    /// Why the token provider is asked before the next connection attempt.
    private var nextTokenRequest: TokenRequest = .connecting
    /// The token the server refused since the last `connected` (the provider gets one chance to replace it).
    private var refusedToken: String?
    /// Whether a token provider call is under way (one at a time).
    private var fetchingToken = false
    /// A connection attempt came due while the provider was answering a token-expiring warning.
    private var connectWhenTokenArrives = false
    private(set) var closed = false
    /// Why the client stopped (nil while running, or when the app closed it).
    private var stopReason: ConnectionFailure?
    private(set) var attemptStartedMillis: UInt64 = 0
    private var lastInboundMillis: UInt64 = 0
    /// When the client last sent a frame (an idle gap is measured from the later of the two).
    private var lastOutboundMillis: UInt64 = 0
    private var lastProbeMillis: UInt64 = 0
    /// Silence after which the connection counts as lost: the ping interval, the pong timeout and a margin.
    var serverSilenceLimitMillis: UInt64 = 60_000
    /// The current session's parameters (nil while not connected).
    var sessionInfo: Connected?
    /// Smart heartbeat learning (`ClientConfiguration.heartbeat`); nil when off.
    var heartbeatLearner: HeartbeatLearner?
    private var reconnectTimer: TimerID?
    /// The failure behind the current wait for a retry.
    private var lastFailure: ConnectionFailure?
    private var pending: [UInt32: PendingPublish] = [:]
    /// One-shot history reads (`LonglinkClient.history(of:)`) waiting for their `subscribed`.
    private var pendingHistory: [UInt32: @Sendable (Result<Subscribed, ClientError>) -> Void] = [:]
    /// Presence requests waiting for their reply (see `ClientDriver+Presence.swift`).
    var pendingPresence: [UInt32: @Sendable (Result<PresenceReply, ClientError>) -> Void] = [:]
    private var flushScheduled = false
    private var random = SystemRandomNumberGenerator()
    private let reader: FrameReader

    init(context: LoopContext, shared: ClientShared) {
        self.context = context
        self.shared = shared
        let configuration = shared.configuration.withLock { $0 }
        self.session = ClientSession(
            token: configuration.token,
            clientName: configuration.clientName,
            clientVersion: configuration.clientVersion,
            sendsAcks: configuration.sendsAcks
        )
        self.reader = FrameReader(maxFrameSize: configuration.maxFrameSize)
        self.heartbeatLearner = configuration.heartbeat.map { learning in
            HeartbeatLearner(
                step: learning.step,
                pingsPerStep: learning.pingsPerStep,
                remembered: learning.store.learnedHeartbeat(forNetwork: learning.networkName)
            )
        }
        context.attach(self)
        context.addBeforeSleep { [unowned self] in self.flushIfNeeded() }
        context.schedule(every: .milliseconds(250)) { [unowned self] in self.tick() }
    }

    var nowMillis: UInt64 { context.now / 1_000_000 }
    private var configuration: ClientConfiguration { shared.configuration.withLock { $0 } }

    // MARK: Connecting

    func connect() {
        guard !closed, transport == nil else { return }
        reconnectTimer = nil
        if fetchingToken {
            connectWhenTokenArrives = true
            return
        }
        shared.setState(.connecting(attempt: attempt))
        if configuration.tokenProvider != nil {
            fetchToken(nextTokenRequest)
        } else {
            openConnection()
        }
    }

    /// Resolves the host, opens the socket and starts the transport's handshake with the session's token.
    private func openConnection() {
        guard !closed, transport == nil else { return }
        attemptStartedMillis = nowMillis
        let configuration = self.configuration
        let (host, port) = (configuration.host, configuration.port)
        let address: SocketAddress
        do {
            address = try SocketAddress.lookUp(host: host, port: port)[0]
        } catch {
            shared.logger.debug("connect failed: \(error)")
            return connectionLost(.hostNotFound(host))
        }
        let fd: CInt
        let connected: Bool
        do {
            (fd, connected) = try Socket.connect(to: address)
        } catch {
            shared.logger.debug("connect failed: \(error)")
            return connectionLost(.socket(error, host: host, port: port))
        }
        let transport: any Transport
        do {
            let name = configuration.serverName ?? host
            transport = try configuration.transport.makeTransport(fd: fd, role: .connecting(serverName: name))
        } catch {
            Socket.close(fd)
            shared.logger.debug("connect failed: \(error)")
            return connectionLost(.handshake(error, host: host, port: port))
        }
        self.transport = transport
        do {
            registration = try context.register(fd: fd, interest: transport.interest.union(.read), handler: self)
        } catch {
            return connectionLost(.network("cannot watch the socket: \(error.reason)"))
        }
        if connected { advanceHandshake() }
    }

    func handleEvent(_ event: SelectorEvent) {
        guard let transport else { return }
        if !transportReady {
            advanceHandshake()
            return
        }
        // A TLS read may wait for writability and a write for readability: while the transport waits for
        // anything, every readiness retries both.
        let transportWaits = !transport.interest.isEmpty
        if transportWaits || !event.isDisjoint(with: [.read, .readEOF, .reset, .error]) { readAvailable() }
        if (transportWaits || event.contains(.write)) && self.transport != nil { flush() }
    }

    private func advanceHandshake() {
        guard let transport else { return }
        do {
            switch try transport.handshake() {
            case .wouldBlock:
                updateInterest()
            case .processed:
                if let resumed = transport.tlsSessionResumed { shared.tlsHandshakeFinished(resumed: resumed) }
                transportReady = true
                receivedBytes = false
                connectionNumber += 1
                lastInboundMillis = nowMillis
                connectToken = session.token
                updateInterest()
                handle(session.transportConnected(pingIntervalMillis: heartbeatLearner?.proposalMillis ?? 0))
            }
        } catch {
            shared.logger.warning("connection set-up failed: \(error)")
            let configuration = self.configuration
            connectionLost(.handshake(error, host: configuration.host, port: configuration.port))
        }
    }

    /// The stream ended or failed after the transport was up: before `connected` the peer is not Longlink.
    private func streamEnded(_ reason: String) {
        if isConnected { return connectionLost(.connectionLost(reason)) }
        connectionLost(.closedBeforeHandshake(encrypted: configuration.transport.isEncrypted, receivedBytes: receivedBytes))
    }

    private func readAvailable() {
        guard let transport else { return }
        for _ in 0..<16 {
            let result: IOResult<Int>
            do {
                result = try transport.read(into: &inbound)
            } catch {
                shared.logger.info("connection lost: \(error)")
                streamEnded(error.underlying.map { $0.reason.lowercased() } ?? error.reason)
                return
            }
            switch result {
            case .wouldBlock:
                sendAcks()
                return
            case .processed(0):
                streamEnded("closed by the server")
                return
            case .processed:
                let idleMillis = nowMillis &- max(lastInboundMillis, lastOutboundMillis)
                lastInboundMillis = nowMillis
                receivedBytes = true
                while self.transport != nil {
                    let frame: ServerFrame?
                    do {
                        frame = try shared.codec.decodeNextServerFrame(from: &inbound, reader: reader)
                    } catch {
                        shared.logger.warning("undecodable frame from server: \(error)")
                        if isConnected { connectionLost(.connectionLost("undecodable frame from the server")) } else {
                            connectionLost(.closedBeforeHandshake(encrypted: configuration.transport.isEncrypted, receivedBytes: true))
                        }
                        return
                    }
                    guard let frame else { break }
                    if interceptHistory(frame) || interceptPresence(frame) { continue }
                    if case .ping = frame, isConnected { heartbeatPingArrived(idleMillis: idleMillis) }
                    handle(session.receive(frame))
                }
                // A frame ended the connection (a disconnect): the local `transport` is closed now; reading it again
                // would report the same loss a second time.
                if self.transport == nil { return }
            }
        }
        sendAcks()
    }

    private func sendAcks() {
        guard isConnected else { return }
        for frame in session.pendingAcks() { send(frame) }
    }

    // MARK: Session events

    private func handle(_ events: [ClientSession.Event]) {
        for event in events {
            switch event {
            case .send(let frame):
                send(frame)
            case .notify(let change):
                shared.toggleValues.record(change)  // before observers run, so isEnabled agrees with them
                shared.observers.notify([change])
            case .connected(let info):
                isConnected = true
                attempt = 0
                refusedToken = nil
                nextTokenRequest = .connecting
                sessionInfo = info
                setSilenceLimit(pingIntervalMillis: UInt64(info.pingIntervalMillis))
                heartbeatConnected(info)
                shared.setState(.connected(info))
                resendPendingPublishes()
            case .publishResult(let result):
                completePublish(result)
            case .error(let error):
                if let publish = pending.removeValue(forKey: error.requestID) {
                    publish.completion(.failure(.refused(error)))
                } else {
                    shared.reportError(error)
                }
            case .subscriptionRefused(let route, let error):
                shared.reportError(error)
                shared.reportSubscriptionRefused(route, error)
            case .subscriptionActive(let route, let recovered):
                shared.reportSubscribed(route, recovered: recovered)
            case .disconnect(let disconnect):
                connectionLost(ConnectionFailure(disconnect))
                return
            case .receipt(let receipt):
                shared.deliverReceipt(receipt)
            case .tokenExpiring(let warning):
                shared.reportTokenExpiring(warning)
                if configuration.tokenProvider != nil && !fetchingToken { fetchToken(.expiring(warning)) }
            }
        }
    }

    private func completePublish(_ result: PublishResult) {
        guard let publish = pending.removeValue(forKey: result.requestID) else { return }
        switch result.outcome {
        case .accepted(let position, let timestamp, let deduplicated):
            publish.completion(
                .success(
                    PublishReceipt(
                        position: position,
                        timestampMillis: timestamp,
                        deduplicated: deduplicated,
                        idempotencyKey: publish.request.idempotencyKey
                    )
                )
            )
        case .refused(let error):
            if error.retryable && nowMillis < publish.deadlineMillis {
                var retry = publish
                retry.sentOnConnection = nil
                let id = session.makeRequestID()
                retry.request.requestID = id
                pending[id] = retry
                context.schedule(after: .milliseconds(200)) { [weak self] in self?.resendPendingPublishes() }
            } else {
                publish.completion(.failure(.refused(error)))
            }
        }
    }

    // MARK: App requests (arrive through the inbox)

    func want(_ route: Route, presenceEvents: Bool = false) {
        if let frame = session.want(route, presenceEvents: presenceEvents) { send(frame) }
    }

    func unwant(_ route: Route) {
        if let frame = session.unwant(route) { send(frame) }
    }

    func publish(_ request: PublishRequest, timeout: Duration, completion: @escaping @Sendable (Result<PublishReceipt, ClientError>) -> Void) {
        guard !closed else {
            completion(.failure(stopError))
            return
        }
        var request = request
        request.requestID = session.makeRequestID()
        let timeoutMillis = UInt64(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        pending[request.requestID] = PendingPublish(request: request, deadlineMillis: nowMillis + timeoutMillis, completion: completion)
        resendPendingPublishes()
    }

    private func resendPendingPublishes() {
        guard isConnected else { return }
        for (id, publish) in pending where publish.sentOnConnection != connectionNumber {
            pending[id]!.sentOnConnection = connectionNumber
            send(.publish(publish.request))
        }
    }

    /// Reads a route's snapshot and retained history without subscribing: a subscribe from the beginning,
    /// answered, then an unsubscribe.
    func history(of route: Route, completion: @escaping @Sendable (Result<Subscribed, ClientError>) -> Void) {
        guard !closed else { return completion(.failure(stopError)) }
        guard isConnected else {
            context.schedule(after: .milliseconds(20)) { [weak self] in
                guard let self else { return completion(.failure(.closed)) }
                if self.nowMillis - self.attemptStartedMillis > 30_000 { return completion(.failure(.timeout)) }
                self.history(of: route, completion: completion)
            }
            return
        }
        let id = session.makeRequestID()
        pendingHistory[id] = completion
        send(.subscribe(SubscribeRequest(requestID: id, route: route.text, since: .zero)))
    }

    private func interceptHistory(_ frame: ServerFrame) -> Bool {
        switch frame {
        case .subscribed(let subscribed):
            guard let completion = pendingHistory.removeValue(forKey: subscribed.requestID) else { return false }
            send(.unsubscribe(UnsubscribeRequest(requestID: session.makeRequestID(), route: subscribed.route.text)))
            completion(.success(subscribed))
            return true
        case .error(let error):
            guard let completion = pendingHistory.removeValue(forKey: error.requestID) else { return false }
            completion(.failure(.refused(error)))
            return true
        default:
            // Pushes for a one-shot read's route may arrive until the unsubscribe lands; the session drops
            // them because it does not hold the route.
            return false
        }
    }

    // MARK: Tokens

    /// Asks the app's token provider on a task of its own, on the client's token thread (`TokenExecutor`); the
    /// answer comes back through the loop's inbox.
    private func fetchToken(_ request: TokenRequest) {
        guard let provider = configuration.tokenProvider else { return }
        fetchingToken = true
        let loop = context.eventLoop
        Task(executorPreference: shared.tokenExecutor) {
            let answer: Result<String, TokenProviderFailure>
            do {
                answer = .success(try await provider(request))
            } catch {
                answer = .failure(TokenProviderFailure(reason: "\(error)"))
            }
            _ = loop.execute { context in context.attachment(ClientDriver.self)?.tokenArrived(answer, for: request) }
        }
    }

    /// The provider answered: connect with the token (or send it as `refresh`), or stop when it failed or gave
    /// back the token the server just refused.
    private func tokenArrived(_ answer: Result<String, TokenProviderFailure>, for request: TokenRequest) {
        fetchingToken = false
        guard !closed else { return }
        let token: String
        switch answer {
        case .failure(let failure):
            shared.logger.warning("token provider failed (\(request)): \(failure.reason)")
            return shutdown(.authentication(.tokenUnavailable("the token provider failed: \(failure.reason)")))
        case .success(let fresh):
            token = fresh
        }
        if case .rejected(let refusal) = request, token == refusedToken {
            return shutdown(.authentication(.tokenUnavailable("the token provider returned the refused token again (\(refusal))")))
        }
        switch request {
        case .connecting, .rejected:
            session.token = token
            openConnection()
        case .expiring:
            setToken(token)
            if connectWhenTokenArrives {
                connectWhenTokenArrives = false
                connect()
            }
        }
    }

    func setToken(_ token: String) {
        session.token = token
        if isConnected { send(.refresh(RefreshRequest(token: token))) }
    }

    // MARK: Writing

    func send(_ frame: ClientFrame) {
        guard transport != nil else { return }
        encodeScratch.clear()
        do {
            try shared.codec.encode(frame, into: &encodeScratch)
        } catch {
            shared.logger.error("could not encode \(frame): \(error)")
            return
        }
        outbound.append(encodeScratch.readableArray)
        lastOutboundMillis = nowMillis
        flushScheduled = true
    }

    private func flushIfNeeded() {
        guard flushScheduled else { return }
        flushScheduled = false
        flush()
    }

    private func flush() {
        guard let transport, transportReady else { return }
        if !outbound.isEmpty {
            do {
                _ = try transport.write(&outbound)
            } catch {
                connectionLost(.connectionLost(error.underlying.map { $0.reason.lowercased() } ?? error.reason))
                return
            }
        }
        updateInterest()
    }

    private func updateInterest() {
        guard let transport, let registration else { return }
        var interest: SelectorEvent = transport.interest
        interest.insert(.read)
        if !outbound.isEmpty { interest.insert(.write) }
        try? context.reregister(registration, interest: interest)
    }

    // MARK: Losing the connection

    /// Tears the connection down and plans the next attempt, or stops: for a terminal failure (a refused token
    /// stops only while the app has not given another one), or when reconnecting is off.
    func connectionLost(_ failure: ConnectionFailure) {
        if let registration { context.deregister(registration) }
        registration = nil
        transport?.close()
        transport = nil
        transportReady = false
        inbound = ByteBuffer()
        outbound.removeAll()
        isConnected = false
        sessionInfo = nil
        session.connectionLost()
        guard !closed else { return }
        shared.logger.debug("connection ended: \(failure)")
        if stopsForGood(failure) || !configuration.reconnects {
            shutdown(failure)
            return
        }
        let delay = failure.reconnectHint ?? configuration.applicationState.reconnectPolicy.delay(attempt: attempt, using: &random)
        shared.setState(.waitingToRetry(attempt: attempt + 1, delay: delay, reason: failure))
        attempt += 1
        lastFailure = failure
        reconnectTimer = context.schedule(after: delay) { [weak self] in self?.connect() }
    }

    /// Whether `failure` ends the client: a token refusal while the token is still the refused one (a reconnect
    /// with it fails the same way; the gateway counted 69 `token_expired` disconnects in 20 s from a client that
    /// retried), or any other terminal failure.
    private func stopsForGood(_ failure: ConnectionFailure) -> Bool {
        guard case .authentication(let refusal) = failure else {
            nextTokenRequest = .connecting
            return failure.isTerminal
        }
        guard configuration.tokenProvider != nil else { return session.token == connectToken }
        // With a provider: ask it once for another token; a second refusal in a row stops the client.
        if refusedToken != nil { return true }
        refusedToken = connectToken
        nextTokenRequest = .rejected(refusal)
        return false
    }

    /// What calls made after the stop fail with.
    private var stopError: ClientError { stopReason.map { .connectionFailed($0) } ?? .closed }

    /// Stops for good: pending publishes and reads fail (with `reason`, or `.closed` when the app closed the
    /// client), the state becomes `.stopped(reason)`.
    func shutdown(_ reason: ConnectionFailure? = nil) {
        closed = true
        stopReason = reason
        if let reconnectTimer { context.cancel(reconnectTimer) }
        if transport != nil {
            flush()
            connectionLost(.connectionLost("closed by the app"))
        }
        let error = stopError
        for (_, publish) in pending { publish.completion(.failure(error)) }
        pending.removeAll()
        for (_, completion) in pendingHistory { completion(.failure(error)) }
        pendingHistory.removeAll()
        for (_, completion) in pendingPresence { completion(.failure(error)) }
        pendingPresence.removeAll()
        shared.setState(.stopped(reason))
    }

    // MARK: Time

    private func tick() {
        let now = nowMillis
        for (id, publish) in pending where now >= publish.deadlineMillis {
            pending.removeValue(forKey: id)
            publish.completion(.failure(.timeout))
        }
        guard transport != nil else { return }
        if !isConnected {
            let timeout = configuration.connectTimeout
            let limit = UInt64(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
            if now &- attemptStartedMillis >= max(limit, 1) { connectionLost(.timedOut(timeout)) }
            return
        }
        let silence = now &- lastInboundMillis
        if silence >= serverSilenceLimitMillis {
            shared.logger.info("server silent for \(silence) ms; reconnecting")
            heartbeatSilentlyDropped()
            connectionLost(.connectionLost("the server was silent for \(silence) ms"))
            return
        }
        // With heartbeat learning, the server's pings at the learned interval are the probe: a ping of the client's
        // own would refresh the network path's idle timer and spoil the measurement.
        if let probe = configuration.applicationState.probeAfter, heartbeatLearner == nil {
            let probeMillis = UInt64(probe.components.seconds * 1000)
            if silence >= probeMillis && now &- lastProbeMillis >= probeMillis {
                lastProbeMillis = now
                send(.ping)
            }
        }
    }

    /// The app moved between foreground and background: a waiting reconnect is re-planned with the new policy.
    func applicationStateChanged() {
        guard let reconnectTimer, !closed else { return }
        context.cancel(reconnectTimer)
        let delay = configuration.applicationState.reconnectPolicy.delay(attempt: max(0, attempt - 1), using: &random)
        shared.setState(.waitingToRetry(attempt: attempt, delay: delay, reason: lastFailure ?? .connectionLost("unknown")))
        self.reconnectTimer = context.schedule(after: delay) { [weak self] in self?.connect() }
    }
}

@available(*, unavailable)
extension ClientDriver: Sendable {}

/// The token provider threw; its error as text (the error itself may not be Sendable-safe to keep).
struct TokenProviderFailure: Error {
    var reason: String
}
