/// A close frame's status code (RFC 6455 §7.4). Longlink's numbered disconnects (3000–3999, the range IANA
/// registers for libraries and frameworks) travel as themselves.
public struct WebSocketCloseCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// The purpose of the connection is fulfilled.
    public static let normal = WebSocketCloseCode(rawValue: 1000)
    /// The endpoint is going away.
    public static let goingAway = WebSocketCloseCode(rawValue: 1001)
    /// The peer broke the WebSocket protocol (unmasked frame, reserved bits, bad opcode, bad fragmentation).
    public static let protocolError = WebSocketCloseCode(rawValue: 1002)
    /// The peer sent a kind of data this endpoint does not accept (a text message).
    public static let unsupportedData = WebSocketCloseCode(rawValue: 1003)
    /// A close reason that is not UTF-8.
    public static let invalidPayload = WebSocketCloseCode(rawValue: 1007)
    /// A message over the size limit.
    public static let messageTooBig = WebSocketCloseCode(rawValue: 1009)
    /// An unexpected server failure.
    public static let internalError = WebSocketCloseCode(rawValue: 1011)

    /// Whether a peer may send this code in a close frame (1005, 1006 and 1015 are never sent; 1004 and
    /// 1016–2999 are reserved; 3000–4999 are for libraries and applications).
    public var mayBeSent: Bool {
        switch rawValue {
        case 1000...1003, 1007...1014, 3000...4999: true
        default: false
        }
    }

    public var description: String { "\(rawValue)" }
}

/// A broken WebSocket rule: the close code to answer with, and why.
public struct WebSocketProtocolError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The code of the close frame sent before closing.
    public var code: WebSocketCloseCode
    /// What was wrong (the close frame's reason).
    public var reason: String

    public init(_ code: WebSocketCloseCode, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { "\(reason) (close \(code))" }
}
