import LonglinkCore
internal import CLonglinkProto

/// Server frames → protobuf-c structs. Every struct lives on the stack and points at the Swift values'
/// own storage, so the pointers are valid only inside `body`.
extension ProtobufFrameCodec {
    typealias CServerFrame = Longlink__V1__ServerFrame

    /// Builds the protobuf-c message of `frame` and calls `body` with it; returns the first failure.
    static func withCMessage(
        _ frame: ServerFrame,
        _ body: (UnsafePointer<CServerFrame>) -> FrameError?
    ) -> FrameError? {
        switch frame {
        case .push(let push):
            return withCPush(push, body)
        case .presenceReply(let reply):
            return withCPresenceReply(reply, body)
        case .presenceEvent(let event):
            return withCPresenceEvent(event, body)
        case .ping:
            var message = Longlink__V1__Ping()
            longlink__v1__ping__init(&message)
            return wrap(&message, LONGLINK__V1__SERVER_FRAME__KIND_PING, { $0.ping = $1 }, body)
        case .pong:
            var message = Longlink__V1__Pong()
            longlink__v1__pong__init(&message)
            return wrap(&message, LONGLINK__V1__SERVER_FRAME__KIND_PONG, { $0.pong = $1 }, body)
        case .deliveryReceipt(let receipt):
            var message = Longlink__V1__DeliveryReceipt()
            longlink__v1__delivery_receipt__init(&message)
            message.acked_count = receipt.ackedCount
            return withCString(receipt.route.text) { route in
                message.route = route
                return withCString(receipt.subscriberID) { subscriber in
                    message.subscriber_id = subscriber
                    return withCPosition(receipt.position) { position in
                        message.position = position
                        return wrap(
                            &message, LONGLINK__V1__SERVER_FRAME__KIND_DELIVERY_RECEIPT,
                            { $0.delivery_receipt = $1 }, body)
                    }
                }
            }
        case .publishResult(let result):
            return withCPublishResult(result, body)
        case .subscribed(let subscribed):
            return withCSubscribed(subscribed, body)
        case .unsubscribed(let unsubscribed):
            var message = Longlink__V1__Unsubscribed()
            longlink__v1__unsubscribed__init(&message)
            message.request_id = unsubscribed.requestID
            return withCString(unsubscribed.route.text) { route in
                message.route = route
                return wrap(&message, LONGLINK__V1__SERVER_FRAME__KIND_UNSUBSCRIBED, { $0.unsubscribed = $1 }, body)
            }
        case .error(let error):
            return withCError(error) { message in
                wrap(message, LONGLINK__V1__SERVER_FRAME__KIND_ERROR, { $0.error = $1 }, body)
            }
        case .tokenExpiring(let expiring):
            var message = Longlink__V1__TokenExpiring()
            longlink__v1__token_expiring__init(&message)
            message.expires_at_ms = expiring.expiresAtMillis
            return wrap(&message, LONGLINK__V1__SERVER_FRAME__KIND_TOKEN_EXPIRING, { $0.token_expiring = $1 }, body)
        case .connected(let connected):
            var message = Longlink__V1__Connected()
            longlink__v1__connected__init(&message)
            message.protocol_version = connected.protocolVersion
            message.ping_interval_ms = connected.pingIntervalMillis
            message.pong_timeout_ms = connected.pongTimeoutMillis
            message.max_frame_size = connected.maxFrameSize
            message.max_subscriptions = connected.maxSubscriptions
            message.token_expires_at_ms = connected.tokenExpiresAtMillis
            message.min_ping_interval_ms = connected.minPingIntervalMillis
            message.max_ping_interval_ms = connected.maxPingIntervalMillis
            return withCString(connected.clientID) { clientID in
                message.client_id = clientID
                return withCString(connected.nodeID) { nodeID in
                    message.node_id = nodeID
                    return wrap(&message, LONGLINK__V1__SERVER_FRAME__KIND_CONNECTED, { $0.connected = $1 }, body)
                }
            }
        case .disconnect(let disconnect):
            var message = Longlink__V1__Disconnect()
            longlink__v1__disconnect__init(&message)
            message.code = disconnect.code.rawValue
            message.reconnect_after_ms = disconnect.reconnectAfterMillis
            return withCString(disconnect.reason) { reason in
                message.reason = reason
                return wrap(&message, LONGLINK__V1__SERVER_FRAME__KIND_DISCONNECT, { $0.disconnect = $1 }, body)
            }
        }
    }

    /// The hot path: a push is one flat message plus its `OrderFields`; the order id and line are in the route.
    private static func withCPush(_ push: Push, _ body: (UnsafePointer<CServerFrame>) -> FrameError?) -> FrameError? {
        guard carriesRecords(push.route) else {
            return .unencodable("push route \(push.route) carries no records")
        }
        let record = push.record
        var message = Longlink__V1__Push()
        longlink__v1__push__init(&message)
        message.offset = record.position.offset
        message.epoch = record.position.epoch
        message.timestamp_ms = record.timestampMillis
        message.skipped_before = push.skippedBefore ? 1 : 0
        return withCString(push.route.text) { route in
            message.route = route
            return withCState(record.toState) { to in
                switch to {
                case .code(let code):
                    message.to_case = LONGLINK__V1__PUSH__TO_TO_STATE
                    message.to_state = code
                case .name(let name):
                    message.to_case = LONGLINK__V1__PUSH__TO_TO_STATE_NAME
                    message.to_state_name = name
                }
                return withOptionalCState(record.fromState) { from in
                    switch from {
                    case .code(let code):
                        message.from_case = LONGLINK__V1__PUSH__FROM_FROM_STATE
                        message.from_state = code
                    case .name(let name):
                        message.from_case = LONGLINK__V1__PUSH__FROM_FROM_STATE_NAME
                        message.from_state_name = name
                    case nil:
                        break
                    }
                    return withCFields(record.fields) { fields in
                        message.fields = fields
                        return wrap(&message, LONGLINK__V1__SERVER_FRAME__KIND_PUSH, { $0.push = $1 }, body)
                    }
                }
            }
        }
    }

    /// Whether `route` is an `order://` or `config://` route (`Route.hasKind`, as a prefix compare of the validated
    /// text: the push encoder asks it once per record).
    static func carriesRecords(_ route: Route) -> Bool {
        var text = route.text
        return text.withUTF8 { bytes in
            bytes.starts(with: Self.orderPrefix) || bytes.starts(with: Self.configPrefix)
        }
    }

    private static let orderPrefix = Array("order://".utf8)
    private static let configPrefix = Array("config://".utf8)

    private static func withCPublishResult(
        _ result: PublishResult,
        _ body: (UnsafePointer<CServerFrame>) -> FrameError?
    ) -> FrameError? {
        var message = Longlink__V1__PublishResult()
        longlink__v1__publish_result__init(&message)
        message.request_id = result.requestID
        let kind = LONGLINK__V1__SERVER_FRAME__KIND_PUBLISH_RESULT
        switch result.outcome {
        case .accepted(let position, let timestampMillis, let deduplicated):
            var accepted = Longlink__V1__Accepted()
            longlink__v1__accepted__init(&accepted)
            accepted.timestamp_ms = timestampMillis
            accepted.deduplicated = deduplicated ? 1 : 0
            return withCPosition(position) { position in
                accepted.position = position
                return withUnsafeMutablePointer(to: &accepted) { accepted in
                    message.outcome_case = LONGLINK__V1__PUBLISH_RESULT__OUTCOME_ACCEPTED
                    message.accepted = accepted
                    return wrap(&message, kind, { $0.publish_result = $1 }, body)
                }
            }
        case .refused(let error):
            return withCError(error) { refused in
                message.outcome_case = LONGLINK__V1__PUBLISH_RESULT__OUTCOME_REFUSED
                message.refused = refused
                return wrap(&message, kind, { $0.publish_result = $1 }, body)
            }
        }
    }

    static func withCError(
        _ error: ErrorFrame,
        _ body: (UnsafeMutablePointer<Longlink__V1__Error>) -> FrameError?
    ) -> FrameError? {
        var message = Longlink__V1__Error()
        longlink__v1__error__init(&message)
        message.request_id = error.requestID
        message.code = error.code.rawValue
        message.retryable = error.retryable ? 1 : 0
        return withCString(error.message) { text in
            message.message = text
            return withUnsafeMutablePointer(to: &message) { body($0) }
        }
    }

    /// Points a `ServerFrame` at `payload` (setting the oneof case) and calls `body` with it.
    static func wrap<Payload>(
        _ payload: inout Payload,
        _ kind: Longlink__V1__ServerFrame__KindCase,
        _ set: (inout CServerFrame, UnsafeMutablePointer<Payload>) -> Void,
        _ body: (UnsafePointer<CServerFrame>) -> FrameError?
    ) -> FrameError? {
        withUnsafeMutablePointer(to: &payload) { payload in wrap(payload, kind, set, body) }
    }

    static func wrap<Payload>(
        _ payload: UnsafeMutablePointer<Payload>,
        _ kind: Longlink__V1__ServerFrame__KindCase,
        _ set: (inout CServerFrame, UnsafeMutablePointer<Payload>) -> Void,
        _ body: (UnsafePointer<CServerFrame>) -> FrameError?
    ) -> FrameError? {
        var frame = CServerFrame()
        longlink__v1__server_frame__init(&frame)
        frame.kind_case = kind
        set(&frame, payload)
        return withUnsafePointer(to: &frame) { body($0) }
    }
}
