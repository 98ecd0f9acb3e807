import LonglinkCore
import LonglinkJSON

/// The significant fields of a decoded frame, in display order, shared by the text and JSON renderings.
struct FrameSummary {
    /// One significant field: its JSON member(s) and its text form (nil: JSON only).
    struct Detail {
        var json: [(String, JSONValue)]
        var text: String?
    }

    var route: String?
    var position: StreamPosition?
    var from: String?
    var to: String?
    /// Whether the frame is a stored record (so a missing `from` means "first record", shown as ∅).
    var isRecord = false
    var timeMillis: UInt64?
    var details: [Detail] = []

    mutating func add(_ key: String, _ value: JSONValue, text: String?) {
        details.append(Detail(json: [(key, value)], text: text))
    }

    mutating func flag(_ key: String, _ on: Bool) {
        if on { add(key, .bool(true), text: key) }
    }

    mutating func add(request id: UInt32) {
        add("request_id", .uint(UInt64(id)), text: "request=\(id)")
    }

    mutating func add(string key: String, _ value: String, textKey: String? = nil) {
        add(key, .string(value), text: "\(textKey ?? key)=\(Self.textValue(value))")
    }

    mutating func add(time key: String, millis: UInt64, textKey: String) {
        add(key, .string(JSONText.isoTime(millis: millis)), text: "\(textKey)=\(JSONText.isoTime(millis: millis))")
    }

    mutating func add(fields: OrderFields) {
        if let driver = fields.driverID { add(string: "driver_id", driver, textKey: "driver") }
        if let eta = fields.etaSeconds { add("eta_seconds", .uint(UInt64(eta)), text: "eta=\(eta)s") }
        if let location = fields.location {
            details.append(Detail(
                json: [("lat_e6", .int(Int64(location.latitudeE6))), ("lon_e6", .int(Int64(location.longitudeE6)))],
                text: "loc=\(location)"))
        }
        if let reason = fields.cancellationReason { add(string: "cancellation_reason", reason, textKey: "reason") }
        if !fields.payload.isEmpty {
            add("payload_bytes", .uint(UInt64(fields.payload.count)), text: "payload=\(fields.payload.count)B")
        }
    }

    /// A value as it appears after `key=`: bare when it has no spaces or quotes, else quoted and escaped.
    static func textValue(_ value: String) -> String {
        let plain = !value.isEmpty && !value.contains { $0 == " " || $0 == "\"" || $0 == "=" || $0.isNewline }
        return plain ? RawWire.escapeText(value) : "\"\(RawWire.escapeText(value))\""
    }

    // MARK: Building

    init(_ frame: ServerFrame) {
        switch frame {
        case .push(let push):
            record(push.record, route: push.route.text)
            flag("skipped_before", push.skippedBefore)
        case .subscribed(let subscribed):
            route = subscribed.route.text
            position = subscribed.position
            add(request: subscribed.requestID)
            add("recovered", .bool(subscribed.recovered), text: "recovered=\(subscribed.recovered ? "yes" : "no")")
            if let snapshot = subscribed.snapshot {
                add(string: "state", snapshot.state.name)
                add(time: "updated_at", millis: snapshot.updatedAtMillis, textKey: "updated")
                add(fields: snapshot.fields)
            }
            add("missed", .uint(UInt64(subscribed.missed.count)), text: "missed=\(subscribed.missed.count)")
        case .unsubscribed(let unsubscribed):
            route = unsubscribed.route.text
            add(request: unsubscribed.requestID)
        case .publishResult(let result):
            add(request: result.requestID)
            switch result.outcome {
            case .accepted(let at, let millis, let deduplicated):
                position = at
                timeMillis = millis
                add("outcome", .string("accepted"), text: "accepted")
                flag("deduplicated", deduplicated)
            case .refused(let error):
                add("outcome", .string("refused"), text: "refused")
                add(error: error)
            }
        case .error(let error):
            add(request: error.requestID)
            add(error: error)
        case .disconnect(let disconnect):
            add("code", .uint(UInt64(disconnect.code.rawValue)), text: "code=\(disconnect.code)")
            add(string: "reason", disconnect.reason)
            if disconnect.reconnectAfterMillis > 0 {
                add("reconnect_after_ms", .uint(UInt64(disconnect.reconnectAfterMillis)),
                    text: "reconnect_after=\(disconnect.reconnectAfterMillis)ms")
            }
        case .deliveryReceipt(let receipt):
            route = receipt.route.text
            position = receipt.position
            add(string: "subscriber_id", receipt.subscriberID, textKey: "subscriber")
            add("acked_count", .uint(UInt64(receipt.ackedCount)), text: "acked=\(receipt.ackedCount)")
        case .tokenExpiring(let expiring):
            add(time: "expires_at", millis: expiring.expiresAtMillis, textKey: "expires")
        case .connected(let connected):
            add(string: "client_id", connected.clientID, textKey: "client_id")
            add(string: "node_id", connected.nodeID, textKey: "node")
            add("protocol_version", .uint(UInt64(connected.protocolVersion)), text: "protocol=\(connected.protocolVersion)")
            add("ping_interval_ms", .uint(UInt64(connected.pingIntervalMillis)), text: "ping=\(connected.pingIntervalMillis)ms")
            add("pong_timeout_ms", .uint(UInt64(connected.pongTimeoutMillis)), text: "pong=\(connected.pongTimeoutMillis)ms")
            add("max_frame_size", .uint(UInt64(connected.maxFrameSize)), text: "max_frame=\(connected.maxFrameSize)")
            add("max_subscriptions", .uint(UInt64(connected.maxSubscriptions)), text: "max_subs=\(connected.maxSubscriptions)")
            if connected.acceptsPingIntervals {
                add("min_ping_interval_ms", .uint(UInt64(connected.minPingIntervalMillis)), text: "ping_min=\(connected.minPingIntervalMillis)ms")
                add("max_ping_interval_ms", .uint(UInt64(connected.maxPingIntervalMillis)), text: "ping_max=\(connected.maxPingIntervalMillis)ms")
            }
            if connected.tokenExpiresAtMillis > 0 {
                add(time: "token_expires_at", millis: connected.tokenExpiresAtMillis, textKey: "token_expires")
            }
        case .presenceReply(let reply):
            route = reply.route.text
            add(request: reply.requestID)
            add("count", .uint(UInt64(reply.count)), text: "count=\(reply.count)")
            add("users", .uint(UInt64(reply.users)), text: "users=\(reply.users)")
            flag("counts_only", reply.countsOnly)
        case .presenceEvent(let event):
            route = event.route.text
            add(string: "event", event.joined ? "join" : "leave")
            add(string: "user", event.member.userID)
            add(string: "connection", event.member.connectionID, textKey: "conn")
        case .ping, .pong:
            break
        }
    }

    init(_ frame: ClientFrame) {
        switch frame {
        case .connect(let connect):
            add("protocol_version", .uint(UInt64(connect.protocolVersion)), text: "protocol=\(connect.protocolVersion)")
            if !connect.clientName.isEmpty || !connect.clientVersion.isEmpty {
                add(string: "client", connect.clientName + (connect.clientVersion.isEmpty ? "" : "/" + connect.clientVersion))
            }
            add("token_bytes", .uint(UInt64(connect.token.utf8.count)), text: "token=\(connect.token.utf8.count)B")
            if connect.pingIntervalMillis > 0 {
                add("ping_interval_ms", .uint(UInt64(connect.pingIntervalMillis)), text: "ping=\(connect.pingIntervalMillis)ms")
            }
        case .subscribe(let subscribe):
            route = subscribe.route
            add(request: subscribe.requestID)
            flag("presence_events", subscribe.presenceEvents)
            if let since = subscribe.since {
                details.append(Detail(
                    json: [("since_epoch", .uint(UInt64(since.epoch))), ("since_offset", .uint(since.offset))],
                    text: "since=\(since)"))
            }
        case .unsubscribe(let unsubscribe):
            route = unsubscribe.route
            add(request: unsubscribe.requestID)
        case .publish(let publish):
            route = "order://\(publish.line)/\(publish.orderID)"
            to = publish.targetState
            add(request: publish.requestID)
            add(fields: publish.fields)
            if !publish.idempotencyKey.isEmpty { add(string: "idempotency_key", publish.idempotencyKey, textKey: "key") }
            flag("wants_receipts", publish.wantsReceipts)
        case .ack(let ack):
            route = ack.route
            add("offset", .uint(ack.offset), text: "offset=\(ack.offset)")
        case .refresh(let refresh):
            add("token_bytes", .uint(UInt64(refresh.token.utf8.count)), text: "token=\(refresh.token.utf8.count)B")
        case .presence(let presence):
            route = presence.route
            add(request: presence.requestID)
        case .heartbeat(let heartbeat):
            add(request: heartbeat.requestID)
            add("ping_interval_ms", .uint(UInt64(heartbeat.pingIntervalMillis)), text: "ping=\(heartbeat.pingIntervalMillis)ms")
        case .ping, .pong:
            break
        }
    }

    private mutating func record(_ record: OrderChangeRecord, route: String) {
        self.route = route
        position = record.position
        from = record.fromState?.name
        isRecord = true
        to = record.toState.name
        timeMillis = record.timestampMillis
        add(fields: record.fields)
    }

    private mutating func add(error: ErrorFrame) {
        add("code", .uint(UInt64(error.code.rawValue)), text: "code=\(error.code)")
        add(string: "message", error.message)
        flag("retryable", error.retryable)
    }
}
