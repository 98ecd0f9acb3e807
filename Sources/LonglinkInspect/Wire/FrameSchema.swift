/// The field names and types of `proto/longlink/v1/frames.proto`, for rendering every field of a frame
/// (`--verbose`) and for finding the fields this version does not know (shown raw).
///
/// Only the inspector uses it: the codec (protobuf-c) has its own generated descriptors. A test checks the
/// rendering against `protoc --decode` on the golden frames, so a drift from the proto shows up there.
public struct FrameSchema: Sendable {
    /// How a field's value is typed.
    public enum FieldType: Hashable, Sendable {
        /// Scalar proto types (varints, or length-delimited for string and bytes).
        case uint32, uint64, sint32, bool, string, bytes
        /// The `State` enum.
        case state
        /// A nested message, by name.
        case message(String)

        /// The wire type this type travels as.
        var wireType: Int {
            switch self {
            case .uint32, .uint64, .sint32, .bool, .state: 0
            case .string, .bytes, .message: 2
            }
        }
    }

    /// One declared field.
    public struct Field: Hashable, Sendable {
        /// The proto name.
        public var name: String
        /// The type.
        public var type: FieldType
    }

    /// Declared fields by message name, then field number.
    public let messages: [String: [Int: Field]]

    /// The schema of `frames.proto` version 1.
    public static let v1 = FrameSchema(messages: [
        "ClientFrame": [
            12: Field(name: "ack", type: .message("Ack")),
            13: Field(name: "publish", type: .message("Publish")),
            14: Field(name: "ping", type: .message("Ping")),
            15: Field(name: "pong", type: .message("Pong")),
            16: Field(name: "subscribe", type: .message("Subscribe")),
            17: Field(name: "unsubscribe", type: .message("Unsubscribe")),
            18: Field(name: "connect", type: .message("Connect")),
            19: Field(name: "refresh", type: .message("Refresh")),
            20: Field(name: "presence", type: .message("PresenceRequest")),
            23: Field(name: "heartbeat", type: .message("HeartbeatRequest")),
        ],
        "ServerFrame": [
            1: Field(name: "push", type: .message("Push")),
            2: Field(name: "ping", type: .message("Ping")),
            3: Field(name: "pong", type: .message("Pong")),
            4: Field(name: "delivery_receipt", type: .message("DeliveryReceipt")),
            5: Field(name: "publish_result", type: .message("PublishResult")),
            6: Field(name: "subscribed", type: .message("Subscribed")),
            7: Field(name: "unsubscribed", type: .message("Unsubscribed")),
            8: Field(name: "error", type: .message("Error")),
            9: Field(name: "token_expiring", type: .message("TokenExpiring")),
            10: Field(name: "connected", type: .message("Connected")),
            11: Field(name: "disconnect", type: .message("Disconnect")),
            21: Field(name: "presence_reply", type: .message("PresenceReply")),
            22: Field(name: "presence_event", type: .message("PresenceEvent")),
        ],
        "Position": [1: Field(name: "epoch", type: .uint32), 2: Field(name: "offset", type: .uint64)],
        "OrderFields": [
            1: Field(name: "driver_id", type: .string), 2: Field(name: "eta_seconds", type: .uint32),
            3: Field(name: "latitude_e6", type: .sint32), 4: Field(name: "longitude_e6", type: .sint32),
            5: Field(name: "cancellation_reason", type: .string), 6: Field(name: "payload", type: .bytes),
        ],
        "Record": recordFields(),
        "Push": recordFields().merging([
            1: Field(name: "route", type: .string), 10: Field(name: "skipped_before", type: .bool),
        ]) { $1 },
        "Snapshot": [
            1: Field(name: "state_code", type: .state), 2: Field(name: "state_name", type: .string),
            3: Field(name: "fields", type: .message("OrderFields")), 4: Field(name: "position", type: .message("Position")),
            5: Field(name: "created_at_ms", type: .uint64), 6: Field(name: "updated_at_ms", type: .uint64),
        ],
        "Connect": [
            1: Field(name: "protocol_version", type: .uint32), 2: Field(name: "token", type: .string),
            3: Field(name: "client_name", type: .string), 4: Field(name: "client_version", type: .string),
            5: Field(name: "ping_interval_ms", type: .uint32),
        ],
        "Subscribe": [
            1: Field(name: "request_id", type: .uint32), 2: Field(name: "route", type: .string),
            3: Field(name: "since", type: .message("Position")), 4: Field(name: "presence_events", type: .bool),
        ],
        "Unsubscribe": [1: Field(name: "request_id", type: .uint32), 2: Field(name: "route", type: .string)],
        "Publish": [
            1: Field(name: "request_id", type: .uint32), 2: Field(name: "order_id", type: .string),
            3: Field(name: "line", type: .string), 4: Field(name: "target_state", type: .state),
            5: Field(name: "target_state_name", type: .string), 6: Field(name: "fields", type: .message("OrderFields")),
            7: Field(name: "idempotency_key", type: .string), 8: Field(name: "wants_receipts", type: .bool),
        ],
        "Ack": [1: Field(name: "route", type: .string), 2: Field(name: "offset", type: .uint64)],
        "Ping": [:],
        "Pong": [:],
        "Refresh": [1: Field(name: "token", type: .string)],
        "PresenceRequest": [1: Field(name: "request_id", type: .uint32), 2: Field(name: "route", type: .string)],
        "HeartbeatRequest": [1: Field(name: "request_id", type: .uint32), 2: Field(name: "ping_interval_ms", type: .uint32)],
        "PresenceMember": [
            1: Field(name: "user_id", type: .string), 2: Field(name: "client_name", type: .string),
            3: Field(name: "connection_id", type: .string), 4: Field(name: "since_ms", type: .uint64),
            5: Field(name: "node_id", type: .string),
        ],
        "PresenceReply": [
            1: Field(name: "request_id", type: .uint32), 2: Field(name: "route", type: .string),
            3: Field(name: "count", type: .uint32), 4: Field(name: "users", type: .uint32),
            5: Field(name: "counts_only", type: .bool), 6: Field(name: "members", type: .message("PresenceMember")),
        ],
        "PresenceEvent": [
            1: Field(name: "route", type: .string), 2: Field(name: "joined", type: .bool),
            3: Field(name: "member", type: .message("PresenceMember")),
        ],
        "Connected": [
            1: Field(name: "protocol_version", type: .uint32), 2: Field(name: "client_id", type: .string),
            3: Field(name: "node_id", type: .string), 4: Field(name: "ping_interval_ms", type: .uint32),
            5: Field(name: "pong_timeout_ms", type: .uint32), 6: Field(name: "max_frame_size", type: .uint32),
            7: Field(name: "max_subscriptions", type: .uint32), 8: Field(name: "token_expires_at_ms", type: .uint64),
            9: Field(name: "min_ping_interval_ms", type: .uint32), 10: Field(name: "max_ping_interval_ms", type: .uint32),
        ],
        "Subscribed": [
            1: Field(name: "request_id", type: .uint32), 2: Field(name: "route", type: .string),
            3: Field(name: "snapshot", type: .message("Snapshot")), 4: Field(name: "position", type: .message("Position")),
            5: Field(name: "recovered", type: .bool), 6: Field(name: "missed", type: .message("Record")),
        ],
        "Unsubscribed": [1: Field(name: "request_id", type: .uint32), 2: Field(name: "route", type: .string)],
        "PublishResult": [
            1: Field(name: "request_id", type: .uint32), 2: Field(name: "accepted", type: .message("Accepted")),
            3: Field(name: "refused", type: .message("Error")),
        ],
        "Accepted": [
            1: Field(name: "position", type: .message("Position")), 2: Field(name: "timestamp_ms", type: .uint64),
            3: Field(name: "deduplicated", type: .bool),
        ],
        "Error": [
            1: Field(name: "request_id", type: .uint32), 2: Field(name: "code", type: .uint32),
            3: Field(name: "message", type: .string), 4: Field(name: "retryable", type: .bool),
        ],
        "Disconnect": [
            1: Field(name: "code", type: .uint32), 2: Field(name: "reason", type: .string),
            3: Field(name: "reconnect_after_ms", type: .uint32),
        ],
        "DeliveryReceipt": [
            1: Field(name: "route", type: .string), 2: Field(name: "position", type: .message("Position")),
            3: Field(name: "subscriber_id", type: .string), 4: Field(name: "acked_count", type: .uint32),
        ],
        "TokenExpiring": [1: Field(name: "expires_at_ms", type: .uint64)],
    ])

    private static func recordFields() -> [Int: Field] {
        [
            2: Field(name: "offset", type: .uint64), 3: Field(name: "epoch", type: .uint32),
            4: Field(name: "timestamp_ms", type: .uint64), 5: Field(name: "to_state", type: .state),
            6: Field(name: "to_state_name", type: .string), 7: Field(name: "from_state", type: .state),
            8: Field(name: "from_state_name", type: .string), 9: Field(name: "fields", type: .message("OrderFields")),
        ]
    }

    /// `State` enum value names, by number.
    public static let stateNames: [UInt64: String] = [
        0: "STATE_UNSPECIFIED", 1: "STATE_CREATED", 2: "STATE_DISPATCHING", 3: "STATE_MATCHING", 4: "STATE_RESERVED",
        5: "STATE_DRIVER_ASSIGNED", 6: "STATE_DRIVER_ARRIVING", 7: "STATE_DRIVER_ARRIVED", 8: "STATE_IN_TRIP",
        9: "STATE_COMPLETED", 10: "STATE_PAID", 11: "STATE_CANCELLED", 12: "STATE_NO_DRIVER_TIMEOUT",
        13: "STATE_POOL_MATCHED",
    ]

    /// Names of fields that carry credentials: rendered as their length only.
    static let secretFields: Set<String> = ["Connect.token", "Refresh.token"]
}
