import LonglinkCore
import LonglinkServer

/// `longlink version`: the build's version and a summary of the wire protocol it speaks.
public enum VersionCommand {
    /// The command.
    public static let command = Command(
        name: "version",
        summary: "print the version and the wire protocol summary",
        maximumPositionals: 0,
        options: []
    ) { _, context in
        context.io.out(summary)
        return 0
    }

    /// The text printed.
    public static var summary: String {
        let errorCodes: [ErrorCode] = [
            .internal, .unavailable, .timeout, .badRequest, .unauthorized, .tokenExpired, .permissionDenied,
            .unknownOrder, .unknownLine, .unknownRouteKind, .malformedRoute, .unknownState, .illegalTransition,
            .alreadySubscribed, .notSubscribed, .tooManySubscriptions, .staleChange, .idempotencyConflict, .invalidField,
            .rateLimited,
        ]
        let disconnectCodes: [DisconnectCode] = [
            .shutdown, .heartbeatTimeout, .slow, .handshakeTimeout, .tooManyConnections, .connectionRateLimited,
            .tokenExpired, .adminReconnect, .serverError, .invalidToken, .protocolViolation, .frameTooLarge,
            .forbidden, .adminBan, .unsupportedProtocol,
        ]
        return """
            longlink \(LonglinkVersion.current), wire protocol v\(LonglinkVersion.protocolVersion) (proto/longlink/v1/frames.proto)
            framing:     varint length prefix + protobuf message per frame
            client→server: connect subscribe unsubscribe publish ack ping pong refresh presence
            server→client: connected subscribed unsubscribed publish_result push ping pong error disconnect delivery_receipt token_expiring presence_reply presence_event
            routes:      order://<line>/<order-id> (order://<line>/* line-wide), config://<app>/<name>
            error codes (100-199 temporary, 400-1999 request): \(errorCodes.map(\.description).joined(separator: " "))
            disconnect codes (3000-3499 reconnect, 3500-3999 do not): \(disconnectCodes.map(\.description).joined(separator: " "))
            """
    }
}
