public import LonglinkJSON
/// An HTTP status code with its reason phrase.
public struct HTTPStatus: Hashable, Sendable, CustomStringConvertible {
    /// The three-digit code.
    public let code: Int
    /// The reason phrase sent on the status line.
    public let reason: String

    /// Creates a status.
    public init(_ code: Int, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// 200.
    public static let ok = HTTPStatus(200, "OK")
    /// 202: accepted, carried out in the background.
    public static let accepted = HTTPStatus(202, "Accepted")
    /// 204.
    public static let noContent = HTTPStatus(204, "No Content")
    /// 400: the request is malformed.
    public static let badRequest = HTTPStatus(400, "Bad Request")
    /// 401: credentials missing or invalid.
    public static let unauthorized = HTTPStatus(401, "Unauthorized")
    /// 403: valid credentials without the right role.
    public static let forbidden = HTTPStatus(403, "Forbidden")
    /// 404.
    public static let notFound = HTTPStatus(404, "Not Found")
    /// 405: the path exists, the method does not (an `Allow` header lists the ones that do).
    public static let methodNotAllowed = HTTPStatus(405, "Method Not Allowed")
    /// 408: the request did not arrive in time.
    public static let requestTimeout = HTTPStatus(408, "Request Timeout")
    /// 409: the request conflicts with the current state.
    public static let conflict = HTTPStatus(409, "Conflict")
    /// 411: a body without `Content-Length` (chunked request bodies are not accepted).
    public static let lengthRequired = HTTPStatus(411, "Length Required")
    /// 413: the body is larger than the limit.
    public static let contentTooLarge = HTTPStatus(413, "Content Too Large")
    /// 414: the request line is longer than the limit.
    public static let uriTooLong = HTTPStatus(414, "URI Too Long")
    /// 422: well-formed, but the content is refused.
    public static let unprocessableContent = HTTPStatus(422, "Unprocessable Content")
    /// 431: the header section is larger than the limit (or has too many fields).
    public static let headerFieldsTooLarge = HTTPStatus(431, "Request Header Fields Too Large")
    /// 500.
    public static let internalServerError = HTTPStatus(500, "Internal Server Error")
    /// 501: a method this server does not implement at all.
    public static let notImplemented = HTTPStatus(501, "Not Implemented")
    /// 503: not ready, draining, or too many connections.
    public static let serviceUnavailable = HTTPStatus(503, "Service Unavailable")
    /// 504: a backend (the Store) did not answer in time.
    public static let gatewayTimeout = HTTPStatus(504, "Gateway Timeout")
    /// 505: an HTTP version other than 1.0 and 1.1.
    public static let versionNotSupported = HTTPStatus(505, "HTTP Version Not Supported")

    public var description: String { "\(code) \(reason)" }
}

/// A complete response: status, headers and body. `Content-Length`, `Connection` and `Date`-free framing are added
/// by the server when it is written.
public struct HTTPResponse: Sendable {
    /// The status.
    public var status: HTTPStatus
    /// Header fields (without `Content-Length` and `Connection`, which the server sets).
    public var headers: [(name: String, value: String)]
    /// The body.
    public var body: [UInt8]

    /// Creates a response.
    public init(status: HTTPStatus, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A `text/plain; charset=utf-8` response.
    public static func text(_ text: String, status: HTTPStatus = .ok) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")], body: Array(text.utf8))
    }

    /// An `application/json` response.
    public static func json(_ value: JSONValue, status: HTTPStatus = .ok) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "application/json")], body: Array(value.serialized.utf8))
    }

    /// A JSON error body `{"error": message, "status": code}`.
    public static func error(_ status: HTTPStatus, _ message: String) -> HTTPResponse {
        json(.object([("error", .string(message)), ("status", .int(Int64(status.code)))]), status: status)
    }

    /// The value of header `name` (case-insensitive), or nil.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercasedASCII
        return headers.first { $0.name.lowercasedASCII == wanted }?.value
    }

    /// The bytes of the status line and headers, with `Content-Length` (unless `chunked`) and `Connection`.
    func head(keepAlive: Bool, chunked: Bool = false) -> [UInt8] {
        var text = "HTTP/1.1 \(status.code) \(status.reason)\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if chunked {
            text += "Transfer-Encoding: chunked\r\n"
        } else {
            text += "Content-Length: \(body.count)\r\n"
        }
        text += keepAlive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n"
        return Array(text.utf8)
    }
}
