import LonglinkCore
public import LonglinkGateway

/// Renders a gateway's counters as Prometheus metrics (`GET /metrics`). Names follow Prometheus conventions:
/// `longlink_` prefix, `_total` for counters, base units (`_seconds`, `_bytes`); then the standard `process_*`
/// metrics (`ProcessMetrics`).
public enum GatewayMetrics {
    /// Gauges and counters owned by the operations surface rather than the gateway.
    public struct Extras: Sendable {
        /// 1 when ready for traffic.
        public var ready: Bool
        /// Changes dropped by Store observers that fell behind.
        public var observerDroppedChanges: Int
        /// Open tap (SSE) clients.
        public var tapClients: Int
        /// Tap clients cut for falling behind.
        public var tapClientsCut: Int
        /// Requests the operations listener answered.
        public var httpRequests: Int

        /// Creates extras.
        public init(ready: Bool, observerDroppedChanges: Int = 0, tapClients: Int = 0, tapClientsCut: Int = 0, httpRequests: Int = 0) {
            self.ready = ready
            self.observerDroppedChanges = observerDroppedChanges
            self.tapClients = tapClients
            self.tapClientsCut = tapClientsCut
            self.httpRequests = httpRequests
        }
    }

    /// The exposition text for `counters` and `extras`.
    public static func render(_ counters: GatewayCounters, extras: Extras, version: String) -> String {
        let stats = counters.snapshot
        var out = PrometheusText()
        out.family("longlink_build_info", type: "gauge", help: "Build information; always 1.", [([("version", version)], 1)])
        out.gauge("longlink_ready", help: "1 when the node accepts traffic (not starting, not draining, store reachable).", extras.ready ? 1 : 0)
        let tls = counters.tlsConnectionCount
        let ws = counters.webSocketConnectionCount
        let wss = counters.secureWebSocketConnectionCount
        out.family(
            "longlink_connections",
            type: "gauge",
            help: "Open client connections by transport.",
            [
                ([("transport", "tcp")], Double(max(0, stats.connections - tls - ws - wss))), ([("transport", "tls")], Double(tls)),
                ([("transport", "ws")], Double(ws)), ([("transport", "wss")], Double(wss)),
            ]
        )
        out.family(
            "longlink_tls_handshakes_total",
            type: "counter",
            help: "Finished TLS handshakes (TLS and wss listeners): full, or resumed from a session ticket.",
            [
                ([("kind", "full")], Double(counters.tlsFullHandshakeCount)),
                ([("kind", "resumed")], Double(counters.tlsResumedHandshakeCount)),
            ]
        )
        out.counter("longlink_connections_accepted_total", help: "Client connections accepted since start.", stats.accepted)
        var refusedReasons = counters.refusedByReason
        for reason in ["limit", "draining"] where refusedReasons[reason] == nil { refusedReasons[reason] = 0 }
        out.family(
            "longlink_connections_refused_total",
            type: "counter",
            help: "Connection attempts refused at accept, by reason.",
            refusedReasons.sorted { $0.key < $1.key }.map { ([("reason", $0.key)], Double($0.value)) }
        )
        out.gauge("longlink_subscriptions", help: "Active subscriptions over all connections.", Double(stats.subscriptions))
        out.counter("longlink_pushes_total", help: "Push frames queued to subscribers.", stats.pushes)
        out.counter("longlink_pushed_bytes_total", help: "Bytes of push frames queued to subscribers.", stats.pushedBytes)
        out.gauge(
            "longlink_flush_ring_loops",
            help: "Event loops flushing through a send ring (flush = ring; a loop that could not make one sends per connection).",
            Double(stats.flushRingLoops)
        )
        out.counter(
            "longlink_flush_submissions_total",
            help: "Send-ring submissions (one io_uring_enter each) of the loops' before-sleep flushes.",
            stats.flushSubmissions
        )
        out.counter(
            "longlink_flush_ring_sends_total",
            help: "Connection writes carried by send-ring submissions (writes per system call: this over submissions).",
            stats.flushRingSends
        )
        out.counter("longlink_publishes_applied_total", help: "Publishes (clients and admin API) the Store accepted.", stats.publishesApplied)
        let refusals = counters.publishesRefusedByCode.sorted { $0.key.rawValue < $1.key.rawValue }
        out.family(
            "longlink_publishes_refused_total",
            type: "counter",
            help: "Publishes (clients and admin API) the Store refused, by numbered error code.",
            refusals.isEmpty
                ? [([("code", "409"), ("reason", "illegal_transition")], 0)]
                : refusals.map { ([("code", String($0.key.rawValue)), ("reason", name(of: $0.key.description))], Double($0.value)) }
        )
        let disconnects = stats.disconnects.sorted { $0.key.rawValue < $1.key.rawValue }
        out.family(
            "longlink_disconnects_total",
            type: "counter",
            help: "Connections closed by the server with a numbered disconnect code.",
            disconnects.isEmpty
                ? [([("code", "3000"), ("reason", "shutdown")], 0)]
                : disconnects.map { ([("code", String($0.key.rawValue)), ("reason", name(of: $0.key.description))], Double($0.value)) }
        )
        out.counter("longlink_slow_consumer_disconnects_total", help: "Subscribers cut for a full outbound queue.", stats.slowDisconnects)
        out.counter("longlink_coalesced_records_total", help: "Records held back and coalesced for slow subscribers.", stats.coalescedRecords)
        out.family(
            "longlink_recoveries_total",
            type: "counter",
            help: "Subscribes with a resume position, by whether the missed history was recovered.",
            [([("recovered", "true")], Double(stats.recoveries)), ([("recovered", "false")], Double(counters.failedRecoveries))]
        )
        out.counter("longlink_protocol_errors_total", help: "Connections that sent undecodable bytes.", stats.protocolErrors)
        out.counter("longlink_store_errors_total", help: "Store failures (unavailable, closed) seen by the gateway.", counters.storeErrorCount)
        out.counter("longlink_broker_errors_total", help: "Broker failures (subscribe, publish).", counters.brokerErrorCount)
        out.counter(
            "longlink_observer_dropped_changes_total",
            help: "Changes dropped for Store observers that fell behind.",
            extras.observerDroppedChanges
        )
        out.gauge("longlink_tap_clients", help: "Open admin tap (Server-Sent Events) clients.", Double(extras.tapClients))
        out.counter("longlink_tap_clients_cut_total", help: "Admin tap clients cut for falling behind.", extras.tapClientsCut)
        out.counter("longlink_http_requests_total", help: "Requests answered by the operations listener.", extras.httpRequests)
        out.histogram(
            "longlink_outbound_queue_bytes",
            help: "Outbound queue size per connection, sampled at every housekeeping tick.",
            [([], counters.outboundQueueBytes)]
        )
        out.histogram(
            "longlink_publish_deliver_latency_seconds",
            help: "Time from the Store accepting a record to a loop queueing it for its subscribers.",
            [([], counters.publishDeliverLatency)]
        )
        out.histogram(
            "longlink_store_apply_latency_seconds",
            help: "Time from handing a publish to the Store writer to its durable result.",
            [([], counters.storeApplyLatency)]
        )
        out.histogram(
            "longlink_loop_iteration_seconds",
            help: "Busy time per event-loop iteration (sleep excluded), per loop.",
            counters.loopIterationHistograms.sorted { $0.key < $1.key }.map { ([("loop", String($0.key))], $0.value) }
        )
        ProcessMetrics.read()?.write(to: &out)
        return out.text
    }

    /// `slow(3002)` → `slow`.
    private static func name(of description: String) -> String {
        guard let open = description.firstIndex(of: "(") else { return description }
        return String(description[..<open])
    }
}
