/// An HTTP answer refusing a WebSocket upgrade: a status, a short reason (the body, in plain text) and any
/// header fields the status calls for (`Allow`, `Sec-WebSocket-Version`). The connection closes after it.
public struct WebSocketRefusal: Error, Sendable, Hashable, CustomStringConvertible {
    /// The HTTP status (400, 403, 404, 405, 426, 431, 503).
    public var status: Int
    /// Why, in words (the response body).
    public var reason: String
    /// Extra header fields, in order.
    public var headers: [WebSocketUpgradeRequest.Field]

    /// A refusal with `status` and `reason`.
    public init(status: Int, reason: String, headers: [WebSocketUpgradeRequest.Field] = []) {
        self.status = status
        self.reason = reason
        self.headers = headers
    }

    /// The head is over the size limit.
    public static func headTooLarge(_ limit: Int) -> WebSocketRefusal {
        WebSocketRefusal(status: 431, reason: "the request head is over \(limit) bytes")
    }

    /// The HTTP reason phrase of `status`.
    public static func phrase(_ status: Int) -> String {
        switch status {
        case 101: "Switching Protocols"
        case 400: "Bad Request"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 426: "Upgrade Required"
        case 431: "Request Header Fields Too Large"
        case 503: "Service Unavailable"
        default: "Error"
        }
    }

    /// The whole response.
    public var responseBytes: [UInt8] {
        let body = reason + "\n"
        var text = "HTTP/1.1 \(status) \(Self.phrase(status))\r\n"
        for field in headers { text += "\(field.name): \(field.value)\r\n" }
        text += "Content-Type: text/plain; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n"
        text += body
        return Array(text.utf8)
    }

    public var description: String { "\(status) \(Self.phrase(status)): \(reason)" }
}

/// An accepted upgrade: the `101 Switching Protocols` answer with the accept hash and the chosen sub-protocol.
public struct WebSocketAcceptance: Sendable, Hashable {
    /// `Sec-WebSocket-Accept`: base64 of the SHA-1 of the client's key and RFC 6455's GUID.
    public var accept: String
    /// The sub-protocol chosen (`Sec-WebSocket-Protocol`).
    public var subprotocol: String

    /// RFC 6455 §1.3's fixed GUID.
    static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// The accept value for a client's `Sec-WebSocket-Key`.
    public static func accept(forKey key: String) -> String {
        Base64.encode(SHA1.digest(Array((key + guid).utf8)))
    }

    /// The whole response.
    public var responseBytes: [UInt8] {
        Array(
            ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Accept: \(accept)\r\nSec-WebSocket-Protocol: \(subprotocol)\r\n\r\n").utf8
        )
    }
}
