/// A numbered error carried by an `error` frame or a refused publish result. Codes are part of the wire
/// protocol and documented in `proto/longlink/v1/frames.proto`:
///
/// - 100–199: server-side problems; temporary, the request may be retried.
/// - 400–1999: problems with the request itself; retrying the same request fails the same way
///   (except `rateLimited`).
///
/// Unknown codes from a newer peer decode as themselves, so the set can grow without breaking clients.
public struct ErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Unexpected server failure.
    public static let `internal` = ErrorCode(rawValue: 100)
    /// The store or broker is unavailable right now.
    public static let unavailable = ErrorCode(rawValue: 101)
    /// The server could not answer in time.
    public static let timeout = ErrorCode(rawValue: 102)

    /// The frame is not valid for this protocol state (e.g. subscribe before connect).
    public static let badRequest = ErrorCode(rawValue: 400)
    /// The token is missing, malformed, badly signed or not yet valid.
    public static let unauthorized = ErrorCode(rawValue: 401)
    /// The token has expired.
    public static let tokenExpired = ErrorCode(rawValue: 402)
    /// The token does not allow this route or action.
    public static let permissionDenied = ErrorCode(rawValue: 403)
    /// No such order.
    public static let unknownOrder = ErrorCode(rawValue: 404)
    /// No such business line.
    public static let unknownLine = ErrorCode(rawValue: 405)
    /// The route's kind is not served, or not open to external subscribers.
    public static let unknownRouteKind = ErrorCode(rawValue: 406)
    /// The route is not a valid `kind://namespace/key` URL.
    public static let malformedRoute = ErrorCode(rawValue: 407)
    /// The target state is not a state of the order's business line.
    public static let unknownState = ErrorCode(rawValue: 408)
    /// The state machine does not allow this transition.
    public static let illegalTransition = ErrorCode(rawValue: 409)
    /// Already subscribed to this route on this connection.
    public static let alreadySubscribed = ErrorCode(rawValue: 410)
    /// Not subscribed to this route on this connection.
    public static let notSubscribed = ErrorCode(rawValue: 411)
    /// The connection holds the maximum number of subscriptions.
    public static let tooManySubscriptions = ErrorCode(rawValue: 412)
    /// The change conflicts with the stored history (stale or duplicate).
    public static let staleChange = ErrorCode(rawValue: 413)
    /// The idempotency key was used before on this order for a different change (other state or fields).
    public static let idempotencyConflict = ErrorCode(rawValue: 414)
    /// A field of the request is invalid (empty id, payload too large, location out of range, ...).
    public static let invalidField = ErrorCode(rawValue: 422)
    /// Too many requests; retry after a pause.
    public static let rateLimited = ErrorCode(rawValue: 429)

    /// Whether repeating the same request later may succeed.
    public var isTemporary: Bool { (100..<200).contains(rawValue) || self == .rateLimited }

    public var description: String {
        switch self {
        case .internal: "internal(100)"
        case .unavailable: "unavailable(101)"
        case .timeout: "timeout(102)"
        case .badRequest: "bad_request(400)"
        case .unauthorized: "unauthorized(401)"
        case .tokenExpired: "token_expired(402)"
        case .permissionDenied: "permission_denied(403)"
        case .unknownOrder: "unknown_order(404)"
        case .unknownLine: "unknown_line(405)"
        case .unknownRouteKind: "unknown_route_kind(406)"
        case .malformedRoute: "malformed_route(407)"
        case .unknownState: "unknown_state(408)"
        case .illegalTransition: "illegal_transition(409)"
        case .alreadySubscribed: "already_subscribed(410)"
        case .notSubscribed: "not_subscribed(411)"
        case .tooManySubscriptions: "too_many_subscriptions(412)"
        case .staleChange: "stale_change(413)"
        case .idempotencyConflict: "idempotency_conflict(414)"
        case .invalidField: "invalid_field(422)"
        case .rateLimited: "rate_limited(429)"
        default: "error(\(rawValue))"
        }
    }
}

/// A numbered reason for closing a connection, sent in a `disconnect` frame just before the close.
///
/// - 3000–3499: the client should reconnect (after `reconnectAfterMillis`, with jitter).
/// - 3500–3999: the client must not reconnect with the same credentials or request.
public struct DisconnectCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// The server is draining or shutting down.
    public static let shutdown = DisconnectCode(rawValue: 3000)
    /// No frame arrived within the pong timeout.
    public static let heartbeatTimeout = DisconnectCode(rawValue: 3001)
    /// The client could not keep up; its outbound queue passed the limit.
    public static let slow = DisconnectCode(rawValue: 3002)
    /// No connect frame within the handshake timeout.
    public static let handshakeTimeout = DisconnectCode(rawValue: 3003)
    /// The process holds its maximum number of connections.
    public static let tooManyConnections = DisconnectCode(rawValue: 3004)
    /// Too many new connections per second (process or source address).
    public static let connectionRateLimited = DisconnectCode(rawValue: 3005)
    /// The token expired without a refresh; reconnect with a new token.
    public static let tokenExpired = DisconnectCode(rawValue: 3006)
    /// An operator disconnected the client; it may come back.
    public static let adminReconnect = DisconnectCode(rawValue: 3007)
    /// An unexpected server error on this connection.
    public static let serverError = DisconnectCode(rawValue: 3008)

    /// The token is invalid (bad signature, wrong algorithm, malformed).
    public static let invalidToken = DisconnectCode(rawValue: 3500)
    /// The peer broke the protocol: garbage bytes, a truncated or wrong-direction frame, an unknown frame kind.
    public static let protocolViolation = DisconnectCode(rawValue: 3501)
    /// A frame's length prefix is above the maximum frame size.
    public static let frameTooLarge = DisconnectCode(rawValue: 3502)
    /// Repeated permission violations.
    public static let forbidden = DisconnectCode(rawValue: 3503)
    /// An operator disconnected the client for good.
    public static let adminBan = DisconnectCode(rawValue: 3504)
    /// The client speaks a protocol version this server does not.
    public static let unsupportedProtocol = DisconnectCode(rawValue: 3505)

    /// Whether the client should reconnect.
    public var shouldReconnect: Bool { rawValue < 3500 }

    public var description: String {
        switch self {
        case .shutdown: "shutdown(3000)"
        case .heartbeatTimeout: "heartbeat_timeout(3001)"
        case .slow: "slow(3002)"
        case .handshakeTimeout: "handshake_timeout(3003)"
        case .tooManyConnections: "too_many_connections(3004)"
        case .connectionRateLimited: "connection_rate_limited(3005)"
        case .tokenExpired: "token_expired(3006)"
        case .adminReconnect: "admin_reconnect(3007)"
        case .serverError: "server_error(3008)"
        case .invalidToken: "invalid_token(3500)"
        case .protocolViolation: "protocol_violation(3501)"
        case .frameTooLarge: "frame_too_large(3502)"
        case .forbidden: "forbidden(3503)"
        case .adminBan: "admin_ban(3504)"
        case .unsupportedProtocol: "unsupported_protocol(3505)"
        default: "disconnect(\(rawValue))"
        }
    }
}
