public import LonglinkCore

/// Gives the client a connection token when it needs one (`ClientConfiguration.tokenProvider`): before every
/// connection attempt, when the server warns that the token expires soon (the new one is sent as `refresh`, the
/// session stays up), and once after the server refused the token. Throwing, or returning the token the server
/// just refused, stops the client (`ConnectionState.stopped`) with the reason. Runs on a task of its own, on a thread
/// of the client's own (not the client's event-loop thread, and not waiting for a free thread of the shared
/// cooperative pool), so it may fetch from the app's backend.
public typealias TokenProvider = @Sendable (TokenRequest) async throws -> String

/// Why the client asks the token provider for a token.
public enum TokenRequest: Hashable, Sendable, CustomStringConvertible {
    /// A connection attempt is about to start.
    case connecting
    /// The server warned that the current token expires at `expiresAtMillis` (ms since the Unix epoch).
    case expiring(TokenExpiring)
    /// The server refused the last token; a different one is needed (the same one stops the client).
    case rejected(AuthenticationFailure)

    public var description: String {
        switch self {
        case .connecting: "token for a new connection"
        case .expiring(let warning): "token expiring at \(TimestampText.iso8601(millis: warning.expiresAtMillis))"
        case .rejected(let failure): "token refused (\(failure))"
        }
    }
}
