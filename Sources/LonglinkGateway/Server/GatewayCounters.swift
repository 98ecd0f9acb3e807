public import LonglinkCore
import Synchronization

/// Process-wide counters every loop bumps with relaxed atomics: what `/metrics`, `inspect` and tests read.
public final class GatewayCounters: Sendable {
    /// Open connections.
    let connections = Atomic<Int>(0)
    /// Connections accepted since start.
    let accepted = Atomic<Int>(0)
    /// Connections refused at accept (limit reached).
    let refused = Atomic<Int>(0)
    /// Active subscriptions.
    let subscriptions = Atomic<Int>(0)
    /// Push frames queued to subscribers.
    let pushes = Atomic<Int>(0)
    /// Bytes of push frames queued.
    let pushedBytes = Atomic<Int>(0)
    /// Send-ring submissions (one `io_uring_enter` each) and the sends they carried (`flush = ring`).
    let flushSubmissions = Atomic<Int>(0)
    let flushRingSends = Atomic<Int>(0)
    /// Loops that flush through a send ring (the others, under `flush = ring`, could not make one: logged).
    let flushRingLoops = Atomic<Int>(0)
    /// Publishes the Store accepted (from clients and the admin API).(from clients and the admin API).
    let publishesApplied = Atomic<Int>(0)
    /// Publishes refused (illegal transition, unknown order, ...).
    let publishesRefused = Atomic<Int>(0)
    /// Subscribers cut for being slow.
    let slowDisconnects = Atomic<Int>(0)
    /// Records held back and coalesced for slow subscribers.
    let coalescedRecords = Atomic<Int>(0)
    /// Connections that sent undecodable bytes.
    let protocolErrors = Atomic<Int>(0)
    /// Subscribes answered with `recovered = true` after a resume.
    let recoveries = Atomic<Int>(0)
    /// Transport handshake steps postponed by the per-iteration handshake budget.
    let handshakesDeferred = Atomic<Int>(0)
    private let disconnects = Mutex<[UInt32: Int]>([:])
    /// Subscribes with a resume position answered with `recovered = false` (history could not be filled).
    let recoveriesFailed = Atomic<Int>(0)
    /// Open connections over TLS (the rest are plain TCP, WebSocket or WebSocket over TLS).
    let tlsConnections = Atomic<Int>(0)
    /// Finished TLS handshakes (TLS and `wss` listeners) that were full ones (certificate and signature).
    let tlsFullHandshakes = Atomic<Int>(0)
    /// Finished TLS handshakes that resumed a session from a ticket.
    let tlsResumedHandshakes = Atomic<Int>(0)
    /// Open WebSocket connections (`ws`).
    let webSocketConnections = Atomic<Int>(0)
    /// Open WebSocket connections over TLS (`wss`).
    let secureWebSocketConnections = Atomic<Int>(0)
    /// Store failures seen by the gateway (storage errors, closed store) on publishes and subscribe reads.
    let storeErrors = Atomic<Int>(0)
    /// Broker failures (subscribe, publish).
    let brokerErrors = Atomic<Int>(0)
    private let refusals = Mutex<[String: Int]>([:])
    private let publishRefusals = Mutex<[UInt32: Int]>([:])
    private let loopIterations = Mutex<[Int: MetricHistogram]>([:])
    /// Time from the Store accepting a record to a loop queueing it for its subscribers (once per record per loop).
    public let publishDeliverLatency = MetricHistogram.latency()
    /// Time from handing a client's publish to the Store's writer to its durable result.
    public let storeApplyLatency = MetricHistogram.latency()
    /// Outbound queue size per connection, sampled at every housekeeping tick.
    public let outboundQueueBytes = MetricHistogram.bytes()

    public init() {}

    /// Counts a connection refused at accept, by reason (`limit`, `draining`, ...).
    func recordRefused(_ reason: String) {
        refused.add(1, ordering: .relaxed)
        refusals.withLock { $0[reason, default: 0] += 1 }
    }

    /// Counts a publish the Store refused, by error code.
    func recordPublishRefused(_ code: ErrorCode) {
        publishRefusals.withLock { $0[code.rawValue, default: 0] += 1 }
    }

    /// Counts a publish made outside a client connection (the admin API) by its Store result.
    public func recordPublish(_ result: Result<AppliedChange, StoreError>) {
        switch result {
        case .success: publishesApplied.add(1, ordering: .relaxed)
        case .failure(let error):
            publishesRefused.add(1, ordering: .relaxed)
            recordPublishRefused(error.code)
            if error.code == .unavailable { storeErrors.add(1, ordering: .relaxed) }
        }
    }

    /// Counts a broker failure seen outside the gateway (the composition root's broker publisher).
    public func recordBrokerError() { brokerErrors.add(1, ordering: .relaxed) }

    /// Counts a Store failure seen outside the gateway (admin reads and publishes).
    public func recordStoreError() { storeErrors.add(1, ordering: .relaxed) }

    /// The iteration-time histogram of loop `id` (busy time per iteration, excluding the sleep).
    public func loopIterationHistogram(_ id: Int) -> MetricHistogram {
        loopIterations.withLock { table in
            if let histogram = table[id] { return histogram }
            let histogram = MetricHistogram(
                bounds: [10_000, 50_000, 100_000, 250_000, 500_000, 1_000_000, 2_500_000, 5_000_000, 10_000_000, 50_000_000, 250_000_000, 1_000_000_000],
                scale: 1e-9
            )
            table[id] = histogram
            return histogram
        }
    }

    /// Every loop's iteration histogram, by loop id.
    public var loopIterationHistograms: [Int: MetricHistogram] { loopIterations.withLock { $0 } }

    /// Connections refused at accept, by reason.
    public var refusedByReason: [String: Int] { refusals.withLock { $0 } }

    /// Publishes the Store refused, by error code.
    public var publishesRefusedByCode: [ErrorCode: Int] {
        publishRefusals.withLock { table in
            Dictionary(uniqueKeysWithValues: table.map { (ErrorCode(rawValue: $0.key), $0.value) })
        }
    }

    /// Resumes answered with recovered = false.
    public var failedRecoveries: Int { recoveriesFailed.load(ordering: .relaxed) }
    /// Open TLS connections.
    public var tlsConnectionCount: Int { tlsConnections.load(ordering: .relaxed) }
    /// Store failures so far.
    public var storeErrorCount: Int { storeErrors.load(ordering: .relaxed) }
    /// Broker failures so far.
    public var brokerErrorCount: Int { brokerErrors.load(ordering: .relaxed) }

    /// Full TLS handshakes finished so far.
    public var tlsFullHandshakeCount: Int { tlsFullHandshakes.load(ordering: .relaxed) }
    /// Resumed TLS handshakes finished so far.
    public var tlsResumedHandshakeCount: Int { tlsResumedHandshakes.load(ordering: .relaxed) }

    /// Counts a finished TLS handshake as full or resumed.
    func tlsHandshakeFinished(resumed: Bool) {
        if resumed { tlsResumedHandshakes.add(1, ordering: .relaxed) } else { tlsFullHandshakes.add(1, ordering: .relaxed) }
    }

    /// Counts an opened connection in its transport's gauge (plain TCP is the rest of `connections`).
    func transportOpened(_ name: TransportName) {
        switch name {
        case .tcp: break
        case .tls: tlsConnections.add(1, ordering: .relaxed)
        case .ws: webSocketConnections.add(1, ordering: .relaxed)
        case .wss: secureWebSocketConnections.add(1, ordering: .relaxed)
        }
    }

    /// Counts a closed connection out of its transport's gauge.
    func transportClosed(_ name: TransportName) {
        switch name {
        case .tcp: break
        case .tls: tlsConnections.subtract(1, ordering: .relaxed)
        case .ws: webSocketConnections.subtract(1, ordering: .relaxed)
        case .wss: secureWebSocketConnections.subtract(1, ordering: .relaxed)
        }
    }

    /// Open WebSocket connections (`ws`).
    public var webSocketConnectionCount: Int { webSocketConnections.load(ordering: .relaxed) }
    /// Open WebSocket connections over TLS (`wss`).
    public var secureWebSocketConnectionCount: Int { secureWebSocketConnections.load(ordering: .relaxed) }

    /// Counts a disconnect by its numbered reason.
    func recordDisconnect(_ code: DisconnectCode) {
        disconnects.withLock { $0[code.rawValue, default: 0] += 1 }
    }

    /// A consistent-enough copy of every counter (each read atomically).
    public var snapshot: GatewayStats {
        GatewayStats(
            connections: connections.load(ordering: .relaxed),
            accepted: accepted.load(ordering: .relaxed),
            refused: refused.load(ordering: .relaxed),
            subscriptions: subscriptions.load(ordering: .relaxed),
            pushes: pushes.load(ordering: .relaxed),
            pushedBytes: pushedBytes.load(ordering: .relaxed),
            flushSubmissions: flushSubmissions.load(ordering: .relaxed),
            flushRingSends: flushRingSends.load(ordering: .relaxed),
            flushRingLoops: flushRingLoops.load(ordering: .relaxed),
            publishesApplied: publishesApplied.load(ordering: .relaxed),
            publishesRefused: publishesRefused.load(ordering: .relaxed),
            slowDisconnects: slowDisconnects.load(ordering: .relaxed),
            coalescedRecords: coalescedRecords.load(ordering: .relaxed),
            protocolErrors: protocolErrors.load(ordering: .relaxed),
            recoveries: recoveries.load(ordering: .relaxed),
            disconnects: disconnectsByCode,
            handshakesDeferred: handshakesDeferred.load(ordering: .relaxed)
        )
    }

    /// Disconnects so far, by numbered reason.
    public var disconnectsByCode: [DisconnectCode: Int] {
        disconnects.withLock { table in
            Dictionary(uniqueKeysWithValues: table.map { (DisconnectCode(rawValue: $0.key), $0.value) })
        }
    }
}

/// A copy of the gateway's counters at one moment.
public struct GatewayStats: Sendable, Hashable {
    /// Open connections.
    public var connections: Int
    /// Connections accepted since start.
    public var accepted: Int
    /// Connections refused at accept.
    public var refused: Int
    /// Active subscriptions.
    public var subscriptions: Int
    /// Push frames queued.
    public var pushes: Int
    /// Push bytes queued.
    public var pushedBytes: Int
    /// Send-ring submissions: one system call each, for every connection the flush gathered (`flush = ring`).
    public var flushSubmissions: Int
    /// Sends those submissions carried: `flushRingSends / flushSubmissions` connections written per system call.
    public var flushRingSends: Int
    /// Event loops flushing through a send ring.
    public var flushRingLoops: Int
    /// Publishes accepted by the Store.
    public var publishesApplied: Int
    /// Publishes refused.
    public var publishesRefused: Int
    /// Slow subscribers cut.
    public var slowDisconnects: Int
    /// Records coalesced for slow subscribers.
    public var coalescedRecords: Int
    /// Connections that sent undecodable bytes.
    public var protocolErrors: Int
    /// Resumes answered with recovered = true.
    public var recoveries: Int
    /// Disconnects by numbered reason.
    public var disconnects: [DisconnectCode: Int]
    /// Handshake steps postponed by the handshake budget.
    public var handshakesDeferred: Int
}
