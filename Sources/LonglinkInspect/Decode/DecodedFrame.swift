public import LonglinkCore

/// Which way a frame travels.
public enum FrameDirection: String, Hashable, Sendable {
    /// Client → gateway (`ClientFrame`, kinds 12–19).
    case client
    /// Gateway → client (`ServerFrame`, kinds 1–11).
    case server
}

/// How the decoder picks the message type of each frame.
public enum DirectionChoice: String, Hashable, Sendable, CaseIterable {
    /// Every frame is a `ClientFrame`.
    case client
    /// Every frame is a `ServerFrame`.
    case server
    /// Per frame, by its kind's field number: ServerFrame uses 1–11, ClientFrame 12–19 (they never overlap).
    case auto
}

/// One frame read from a stream: where it was, which way it went and what it says.
public struct DecodedFrame: Hashable, Sendable {
    /// What the body turned out to be.
    public enum Content: Hashable, Sendable {
        /// A gateway → client frame the codec decoded.
        case server(ServerFrame)
        /// A client → gateway frame the codec decoded.
        case client(ClientFrame)
        /// The codec refused the body; `reason` says why (the raw fields still show what is in it).
        case undecodable(reason: String)
    }

    /// Offset of the frame's length prefix in the input (or in its TCP stream direction).
    public var byteOffset: Int
    /// Size of the length prefix in bytes.
    public var prefixLength: Int
    /// The body (without its prefix).
    public var body: [UInt8]
    /// The direction, when known (decoded, or recognisable from the kind's field number).
    public var direction: FrameDirection?
    /// The decoded frame, or why it could not be decoded.
    public var content: Content
    /// The body's fields as raw protobuf (every field, known or not), and the wire error if the body is not
    /// a valid message (then `fields` holds what was read before it).
    public var raw: (fields: [RawField], error: RawWireError?) {
        RawWire.parsePrefix(body)
    }
    /// Fields the schema does not know, with where they are.
    public var unknownFields: [UnknownField]

    /// Creates a frame.
    public init(
        byteOffset: Int,
        prefixLength: Int,
        body: [UInt8],
        direction: FrameDirection?,
        content: Content,
        unknownFields: [UnknownField] = []
    ) {
        self.byteOffset = byteOffset
        self.prefixLength = prefixLength
        self.body = body
        self.direction = direction
        self.content = content
        self.unknownFields = unknownFields
    }

    /// The frame's size on the wire (prefix and body).
    public var wireSize: Int { prefixLength + body.count }

    /// The frame kind as named in the proto (`push`, `subscribe`, …), or `malformed`.
    public var kind: String {
        switch content {
        case .server(let frame): frame.kindName
        case .client(let frame): frame.kindName
        case .undecodable: "malformed"
        }
    }

    /// Whether the codec refused this frame.
    public var isMalformed: Bool {
        if case .undecodable = content { return true }
        return false
    }

    /// The message type name of the body (`ServerFrame`/`ClientFrame`), or `frame` when the direction is unknown.
    public var messageName: String {
        switch direction {
        case .server: "ServerFrame"
        case .client: "ClientFrame"
        case nil: "frame"
        }
    }
}

extension ServerFrame {
    /// The `oneof` member's name in the proto.
    public var kindName: String {
        switch self {
        case .connected: "connected"
        case .subscribed: "subscribed"
        case .unsubscribed: "unsubscribed"
        case .publishResult: "publish_result"
        case .push: "push"
        case .ping: "ping"
        case .pong: "pong"
        case .error: "error"
        case .disconnect: "disconnect"
        case .deliveryReceipt: "delivery_receipt"
        case .tokenExpiring: "token_expiring"
        case .presenceReply: "presence_reply"
        case .presenceEvent: "presence_event"
        }
    }
}

extension ClientFrame {
    /// The `oneof` member's name in the proto.
    public var kindName: String {
        switch self {
        case .connect: "connect"
        case .subscribe: "subscribe"
        case .unsubscribe: "unsubscribe"
        case .publish: "publish"
        case .ack: "ack"
        case .ping: "ping"
        case .pong: "pong"
        case .refresh: "refresh"
        case .presence: "presence"
        case .heartbeat: "heartbeat"
        }
    }
}
