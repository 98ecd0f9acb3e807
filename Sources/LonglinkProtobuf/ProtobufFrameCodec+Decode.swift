import LonglinkCore
internal import CLonglinkProto

/// protobuf-c structs → Swift frames, validated. The structs live in the decoding arena; everything
/// returned is a Swift copy.
extension ProtobufFrameCodec {
    static func serverFrame(from message: Longlink__V1__ServerFrame) throws(FrameError) -> ServerFrame {
        switch message.kind_case {
        case LONGLINK__V1__SERVER_FRAME__KIND_PUSH:
            return .push(try push(message.push.pointee))
        case LONGLINK__V1__SERVER_FRAME__KIND_PING:
            return .ping
        case LONGLINK__V1__SERVER_FRAME__KIND_PONG:
            return .pong
        case LONGLINK__V1__SERVER_FRAME__KIND_DELIVERY_RECEIPT:
            let receipt = message.delivery_receipt.pointee
            return .deliveryReceipt(
                DeliveryReceipt(
                    route: try route(receipt.route, "delivery_receipt.route"),
                    position: position(receipt.position),
                    subscriberID: try string(receipt.subscriber_id, "delivery_receipt.subscriber_id"),
                    ackedCount: receipt.acked_count
                ))
        case LONGLINK__V1__SERVER_FRAME__KIND_PUBLISH_RESULT:
            return .publishResult(try publishResult(message.publish_result.pointee))
        case LONGLINK__V1__SERVER_FRAME__KIND_SUBSCRIBED:
            return .subscribed(try subscribed(message.subscribed.pointee))
        case LONGLINK__V1__SERVER_FRAME__KIND_UNSUBSCRIBED:
            let unsubscribed = message.unsubscribed.pointee
            return .unsubscribed(
                Unsubscribed(
                    requestID: unsubscribed.request_id,
                    route: try route(unsubscribed.route, "unsubscribed.route")
                ))
        case LONGLINK__V1__SERVER_FRAME__KIND_ERROR:
            return .error(try error(message.error.pointee))
        case LONGLINK__V1__SERVER_FRAME__KIND_TOKEN_EXPIRING:
            return .tokenExpiring(TokenExpiring(expiresAtMillis: message.token_expiring.pointee.expires_at_ms))
        case LONGLINK__V1__SERVER_FRAME__KIND_CONNECTED:
            let connected = message.connected.pointee
            return .connected(
                Connected(
                    protocolVersion: connected.protocol_version,
                    clientID: try string(connected.client_id, "connected.client_id"),
                    nodeID: try string(connected.node_id, "connected.node_id"),
                    pingIntervalMillis: connected.ping_interval_ms,
                    pongTimeoutMillis: connected.pong_timeout_ms,
                    maxFrameSize: connected.max_frame_size,
                    maxSubscriptions: connected.max_subscriptions,
                    tokenExpiresAtMillis: connected.token_expires_at_ms,
                    minPingIntervalMillis: connected.min_ping_interval_ms,
                    maxPingIntervalMillis: connected.max_ping_interval_ms
                ))
        case LONGLINK__V1__SERVER_FRAME__KIND_DISCONNECT:
            let disconnect = message.disconnect.pointee
            return .disconnect(
                Disconnect(
                    code: DisconnectCode(rawValue: disconnect.code),
                    reason: try string(disconnect.reason, "disconnect.reason"),
                    reconnectAfterMillis: disconnect.reconnect_after_ms
                ))
        case LONGLINK__V1__SERVER_FRAME__KIND_PRESENCE_REPLY:
            return .presenceReply(try presenceReply(message.presence_reply.pointee))
        case LONGLINK__V1__SERVER_FRAME__KIND_PRESENCE_EVENT:
            return .presenceEvent(try presenceEvent(message.presence_event.pointee))
        default:
            // Not set, or a kind this side does not know (a newer peer, or a client frame sent the wrong way).
            throw .unknownFrameKind
        }
    }

    static func clientFrame(from message: Longlink__V1__ClientFrame) throws(FrameError) -> ClientFrame {
        switch message.kind_case {
        case LONGLINK__V1__CLIENT_FRAME__KIND_ACK:
            let ack = message.ack.pointee
            return .ack(Ack(route: try string(ack.route, "ack.route"), offset: ack.offset))
        case LONGLINK__V1__CLIENT_FRAME__KIND_PUBLISH:
            return .publish(try publish(message.publish.pointee))
        case LONGLINK__V1__CLIENT_FRAME__KIND_PING:
            return .ping
        case LONGLINK__V1__CLIENT_FRAME__KIND_PONG:
            return .pong
        case LONGLINK__V1__CLIENT_FRAME__KIND_SUBSCRIBE:
            let subscribe = message.subscribe.pointee
            return .subscribe(
                SubscribeRequest(
                    requestID: subscribe.request_id,
                    route: try string(subscribe.route, "subscribe.route"),
                    since: subscribe.since == nil ? nil : position(subscribe.since),
                    presenceEvents: subscribe.presence_events != 0
                ))
        case LONGLINK__V1__CLIENT_FRAME__KIND_UNSUBSCRIBE:
            let unsubscribe = message.unsubscribe.pointee
            return .unsubscribe(
                UnsubscribeRequest(
                    requestID: unsubscribe.request_id,
                    route: try string(unsubscribe.route, "unsubscribe.route")
                ))
        case LONGLINK__V1__CLIENT_FRAME__KIND_CONNECT:
            let connect = message.connect.pointee
            return .connect(
                ConnectRequest(
                    protocolVersion: connect.protocol_version,
                    token: try string(connect.token, "connect.token"),
                    clientName: try string(connect.client_name, "connect.client_name"),
                    clientVersion: try string(connect.client_version, "connect.client_version"),
                    pingIntervalMillis: connect.ping_interval_ms
                ))
        case LONGLINK__V1__CLIENT_FRAME__KIND_REFRESH:
            return .refresh(RefreshRequest(token: try string(message.refresh.pointee.token, "refresh.token")))
        case LONGLINK__V1__CLIENT_FRAME__KIND_PRESENCE:
            let presence = message.presence.pointee
            return .presence(PresenceRequest(requestID: presence.request_id, route: try string(presence.route, "presence.route")))
        case LONGLINK__V1__CLIENT_FRAME__KIND_HEARTBEAT:
            let heartbeat = message.heartbeat.pointee
            return .heartbeat(HeartbeatRequest(requestID: heartbeat.request_id, pingIntervalMillis: heartbeat.ping_interval_ms))
        default:
            // Not set, or a kind this side does not know (a newer peer, or a server frame sent the wrong way).
            throw .unknownFrameKind
        }
    }

    // MARK: Messages

    private static func push(_ message: Longlink__V1__Push) throws(FrameError) -> Push {
        let (route, line, id) = try orderRoute(message.route, "push.route")
        let toState: OrderState
        switch message.to_case {
        case LONGLINK__V1__PUSH__TO_TO_STATE: toState = try state(code: message.to_state)
        case LONGLINK__V1__PUSH__TO_TO_STATE_NAME: toState = try state(name: message.to_state_name)
        default: throw .invalidValue("push without a target state")
        }
        let fromState: OrderState?
        switch message.from_case {
        case LONGLINK__V1__PUSH__FROM_FROM_STATE: fromState = try state(code: message.from_state)
        case LONGLINK__V1__PUSH__FROM_FROM_STATE_NAME: fromState = try state(name: message.from_state_name)
        default: fromState = nil
        }
        let record = OrderChangeRecord(
            orderID: id,
            line: line,
            fromState: fromState,
            toState: toState,
            fields: try fields(message.fields),
            position: StreamPosition(epoch: message.epoch, offset: message.offset),
            timestampMillis: message.timestamp_ms,
            kind: route.kind
        )
        return Push(route: route, record: record, skippedBefore: message.skipped_before != 0)
    }

    private static func record(
        _ message: Longlink__V1__Record,
        line: BusinessLine,
        id: OrderID,
        kind: RouteKind
    ) throws(FrameError) -> OrderChangeRecord {
        let toState: OrderState
        switch message.to_case {
        case LONGLINK__V1__RECORD__TO_TO_STATE: toState = try state(code: message.to_state)
        case LONGLINK__V1__RECORD__TO_TO_STATE_NAME: toState = try state(name: message.to_state_name)
        default: throw .invalidValue("record without a target state")
        }
        let fromState: OrderState?
        switch message.from_case {
        case LONGLINK__V1__RECORD__FROM_FROM_STATE: fromState = try state(code: message.from_state)
        case LONGLINK__V1__RECORD__FROM_FROM_STATE_NAME: fromState = try state(name: message.from_state_name)
        default: fromState = nil
        }
        return OrderChangeRecord(
            orderID: id,
            line: line,
            fromState: fromState,
            toState: toState,
            fields: try fields(message.fields),
            position: StreamPosition(epoch: message.epoch, offset: message.offset),
            timestampMillis: message.timestamp_ms,
            kind: kind
        )
    }

    private static func subscribed(_ message: Longlink__V1__Subscribed) throws(FrameError) -> Subscribed {
        let route = try route(message.route, "subscribed.route")
        var snapshot: OrderSnapshot?
        var missed: [OrderChangeRecord] = []
        if message.snapshot != nil || message.n_missed > 0 {
            guard let order = route.recordKey else {
                throw .invalidValue("subscribed.route: '\(route)' carries records but is not an order or config route")
            }
            if let pointer = message.snapshot {
                let snap = pointer.pointee
                let state: OrderState
                switch snap.state_case {
                case LONGLINK__V1__SNAPSHOT__STATE_STATE_CODE: state = try Self.state(code: snap.state_code)
                case LONGLINK__V1__SNAPSHOT__STATE_STATE_NAME: state = try Self.state(name: snap.state_name)
                default: throw .invalidValue("snapshot without a state")
                }
                snapshot = OrderSnapshot(
                    orderID: order.id,
                    line: order.line,
                    state: state,
                    fields: try fields(snap.fields),
                    position: position(snap.position),
                    createdAtMillis: snap.created_at_ms,
                    updatedAtMillis: snap.updated_at_ms,
                    kind: route.kind
                )
            }
            missed.reserveCapacity(message.n_missed)
            for index in 0..<message.n_missed {
                guard let pointer = message.missed[index] else { throw .malformed("empty missed record") }
                missed.append(try record(pointer.pointee, line: order.line, id: order.id, kind: route.kind))
            }
        }
        return Subscribed(
            requestID: message.request_id,
            route: route,
            snapshot: snapshot,
            position: position(message.position),
            recovered: message.recovered != 0,
            missed: missed
        )
    }

    private static func publishResult(_ message: Longlink__V1__PublishResult) throws(FrameError) -> PublishResult {
        switch message.outcome_case {
        case LONGLINK__V1__PUBLISH_RESULT__OUTCOME_ACCEPTED:
            let accepted = message.accepted.pointee
            return PublishResult(
                requestID: message.request_id,
                outcome: .accepted(
                    position: position(accepted.position),
                    timestampMillis: accepted.timestamp_ms,
                    deduplicated: accepted.deduplicated != 0
                ))
        case LONGLINK__V1__PUBLISH_RESULT__OUTCOME_REFUSED:
            return PublishResult(requestID: message.request_id, outcome: .refused(try error(message.refused.pointee)))
        default:
            throw .invalidValue("publish_result without an outcome")
        }
    }

    private static func error(_ message: Longlink__V1__Error) throws(FrameError) -> ErrorFrame {
        ErrorFrame(
            requestID: message.request_id,
            code: ErrorCode(rawValue: message.code),
            message: try string(message.message, "error.message"),
            retryable: message.retryable != 0
        )
    }

    private static func publish(_ message: Longlink__V1__Publish) throws(FrameError) -> PublishRequest {
        let target: OrderState
        switch message.target_case {
        case LONGLINK__V1__PUBLISH__TARGET_TARGET_STATE: target = try state(code: message.target_state)
        case LONGLINK__V1__PUBLISH__TARGET_TARGET_STATE_NAME: target = try state(name: message.target_state_name)
        default: throw .invalidValue("publish without a target state")
        }
        return PublishRequest(
            requestID: message.request_id,
            orderID: try string(message.order_id, "publish.order_id"),
            line: try string(message.line, "publish.line"),
            targetState: target.name,
            fields: try fields(message.fields),
            idempotencyKey: try string(message.idempotency_key, "publish.idempotency_key"),
            wantsReceipts: message.wants_receipts != 0
        )
    }
}
