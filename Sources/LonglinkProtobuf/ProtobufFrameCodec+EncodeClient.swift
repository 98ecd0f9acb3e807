import LonglinkCore
internal import CLonglinkProto

/// Client frames → protobuf-c structs, built like the server frames (stack structs pointing at Swift storage).
extension ProtobufFrameCodec {
    typealias CClientFrame = Longlink__V1__ClientFrame

    /// Builds the protobuf-c message of `frame` and calls `body` with it; returns the first failure.
    static func withCMessage(
        _ frame: ClientFrame,
        _ body: (UnsafePointer<CClientFrame>) -> FrameError?
    ) -> FrameError? {
        switch frame {
        case .ack(let ack):
            var message = Longlink__V1__Ack()
            longlink__v1__ack__init(&message)
            message.offset = ack.offset
            return withCString(ack.route) { route in
                message.route = route
                return wrap(&message, LONGLINK__V1__CLIENT_FRAME__KIND_ACK, { $0.ack = $1 }, body)
            }
        case .publish(let publish):
            return withCPublish(publish, body)
        case .ping:
            var message = Longlink__V1__Ping()
            longlink__v1__ping__init(&message)
            return wrap(&message, LONGLINK__V1__CLIENT_FRAME__KIND_PING, { $0.ping = $1 }, body)
        case .pong:
            var message = Longlink__V1__Pong()
            longlink__v1__pong__init(&message)
            return wrap(&message, LONGLINK__V1__CLIENT_FRAME__KIND_PONG, { $0.pong = $1 }, body)
        case .subscribe(let subscribe):
            var message = Longlink__V1__Subscribe()
            longlink__v1__subscribe__init(&message)
            message.request_id = subscribe.requestID
            return withCString(subscribe.route) { route in
                message.route = route
                message.presence_events = subscribe.presenceEvents ? 1 : 0
                return withCPosition(subscribe.since) { since in
                    message.since = since
                    return wrap(&message, LONGLINK__V1__CLIENT_FRAME__KIND_SUBSCRIBE, { $0.subscribe = $1 }, body)
                }
            }
        case .unsubscribe(let unsubscribe):
            var message = Longlink__V1__Unsubscribe()
            longlink__v1__unsubscribe__init(&message)
            message.request_id = unsubscribe.requestID
            return withCString(unsubscribe.route) { route in
                message.route = route
                return wrap(&message, LONGLINK__V1__CLIENT_FRAME__KIND_UNSUBSCRIBE, { $0.unsubscribe = $1 }, body)
            }
        case .connect(let connect):
            var message = Longlink__V1__Connect()
            longlink__v1__connect__init(&message)
            message.protocol_version = connect.protocolVersion
            message.ping_interval_ms = connect.pingIntervalMillis
            return withCString(connect.token) { token in
                message.token = token
                return withCString(connect.clientName) { name in
                    message.client_name = name
                    return withCString(connect.clientVersion) { version in
                        message.client_version = version
                        return wrap(&message, LONGLINK__V1__CLIENT_FRAME__KIND_CONNECT, { $0.connect = $1 }, body)
                    }
                }
            }
        case .refresh(let refresh):
            var message = Longlink__V1__Refresh()
            longlink__v1__refresh__init(&message)
            return withCString(refresh.token) { token in
                message.token = token
                return wrap(&message, LONGLINK__V1__CLIENT_FRAME__KIND_REFRESH, { $0.refresh = $1 }, body)
            }
        case .presence(let presence):
            var message = Longlink__V1__PresenceRequest()
            longlink__v1__presence_request__init(&message)
            message.request_id = presence.requestID
            return withCString(presence.route) { route in
                message.route = route
                return wrap(&message, LONGLINK__V1__CLIENT_FRAME__KIND_PRESENCE, { $0.presence = $1 }, body)
            }
        case .heartbeat(let heartbeat):
            var message = Longlink__V1__HeartbeatRequest()
            longlink__v1__heartbeat_request__init(&message)
            message.request_id = heartbeat.requestID
            message.ping_interval_ms = heartbeat.pingIntervalMillis
            return wrap(&message, LONGLINK__V1__CLIENT_FRAME__KIND_HEARTBEAT, { $0.heartbeat = $1 }, body)
        }
    }

    private static func withCPublish(
        _ publish: PublishRequest,
        _ body: (UnsafePointer<CClientFrame>) -> FrameError?
    ) -> FrameError? {
        var message = Longlink__V1__Publish()
        longlink__v1__publish__init(&message)
        message.request_id = publish.requestID
        message.wants_receipts = publish.wantsReceipts ? 1 : 0
        return withCString(publish.orderID) { orderID in
            message.order_id = orderID
            return withCString(publish.line) { line in
                message.line = line
                return withCString(publish.idempotencyKey) { key in
                    message.idempotency_key = key
                    return withCState(OrderState(publish.targetState)) { target in
                        switch target {
                        case .code(let code):
                            message.target_case = LONGLINK__V1__PUBLISH__TARGET_TARGET_STATE
                            message.target_state = code
                        case .name(let name):
                            message.target_case = LONGLINK__V1__PUBLISH__TARGET_TARGET_STATE_NAME
                            message.target_state_name = name
                        }
                        return withCFields(publish.fields) { fields in
                            message.fields = fields
                            return wrap(&message, LONGLINK__V1__CLIENT_FRAME__KIND_PUBLISH, { $0.publish = $1 }, body)
                        }
                    }
                }
            }
        }
    }

    /// Points a `ClientFrame` at `payload` (setting the oneof case) and calls `body` with it.
    static func wrap<Payload>(
        _ payload: inout Payload,
        _ kind: Longlink__V1__ClientFrame__KindCase,
        _ set: (inout CClientFrame, UnsafeMutablePointer<Payload>) -> Void,
        _ body: (UnsafePointer<CClientFrame>) -> FrameError?
    ) -> FrameError? {
        withUnsafeMutablePointer(to: &payload) { payload in
            var frame = CClientFrame()
            longlink__v1__client_frame__init(&frame)
            frame.kind_case = kind
            set(&frame, payload)
            return withUnsafePointer(to: &frame) { body($0) }
        }
    }
}
