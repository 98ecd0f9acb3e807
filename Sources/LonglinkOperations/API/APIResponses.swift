import LonglinkCore
import LonglinkHTTP
import LonglinkJSON

/// The backend API's JSON shapes. Every error is `{"error": message, "code": wire code, "status": HTTP status}`,
/// plus `"field"` when one field of the request is at fault; the wire codes are the socket protocol's.
enum APIResponses {
    /// A stored (or deduplicated) change: `{"route","epoch","offset","time_ms","state","deduplicated"}`.
    static func accepted(_ applied: AppliedChange) -> [(String, JSONValue)] {
        [
            ("route", .string(applied.record.route.text)),
            ("epoch", .int(Int64(applied.record.position.epoch))),
            ("offset", .int(Int64(clamping: applied.record.position.offset))),
            ("time_ms", .int(Int64(clamping: applied.record.timestampMillis))),
            ("state", .string(applied.snapshot.state.name)),
            ("deduplicated", .bool(applied.deduplicated)),
        ]
    }

    /// The HTTP status a Store refusal maps to.
    static func status(of error: StoreError) -> HTTPStatus {
        switch error {
        case .illegalTransition, .unknownState, .conflict, .idempotencyConflict: .conflict
        case .unknownOrder, .unknownLine: .notFound
        case .invalidField: .unprocessableContent
        case .storage, .closed: .serviceUnavailable
        }
    }

    /// A Store refusal's members (the message without the internal type name).
    static func refusalMembers(_ error: StoreError) -> [(String, JSONValue)] {
        [
            ("error", .string(message(error))),
            ("code", .int(Int64(error.code.rawValue))),
            ("status", .int(Int64(status(of: error).code))),
        ]
    }

    /// A Store refusal as a response.
    static func refusal(_ error: StoreError) -> HTTPResponse {
        var response = json(.object(refusalMembers(error)), status: status(of: error))
        if case .storage(_, retryable: true) = error { response.headers.append(("Retry-After", "1")) }
        return response
    }

    /// A refused field as a response.
    static func refusal(_ error: APIFieldError) -> HTTPResponse {
        let status = HTTPStatus(error.status, error.status == 400 ? "Bad Request" : error.status == 413 ? "Content Too Large" : "Unprocessable Content")
        return json(
            .object([
                ("error", .string(error.description)),
                ("field", .string(error.field)),
                ("code", .int(Int64(error.code.rawValue))),
                ("status", .int(Int64(error.status))),
            ]),
            status: status
        )
    }

    /// A publish the token does not allow (403, `permission_denied`).
    static func refusal(_ denial: PublishDenial) -> HTTPResponse {
        error(.forbidden, "\(denial)", code: .permissionDenied)
    }

    /// Any other error with its wire code.
    static func error(_ status: HTTPStatus, _ message: String, code: ErrorCode) -> HTTPResponse {
        json(
            .object([
                ("error", .string(message)),
                ("code", .int(Int64(code.rawValue))),
                ("status", .int(Int64(status.code))),
            ]),
            status: status
        )
    }

    /// A JSON response whose body ends with a newline (so `curl` output reads line by line).
    static func json(_ value: JSONValue, status: HTTPStatus = .ok) -> HTTPResponse {
        var response = HTTPResponse.json(value, status: status)
        response.body.append(UInt8(ascii: "\n"))
        return response
    }

    /// A Store error's text for people: its description without the `StoreError: ` prefix.
    static func message(_ error: StoreError) -> String {
        let text = error.description
        let prefix = "StoreError: "
        return text.hasPrefix(prefix) ? String(text.dropFirst(prefix.count)) : text
    }
}
