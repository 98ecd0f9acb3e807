import LonglinkCore
import LonglinkJSON

/// Reads the JSON of one order change for the backend API, strictly: every member must be known and of the right
/// type, and the first problem is reported with the field's name (`changes[3].eta_seconds` inside a batch), so a
/// backend sees exactly what to fix. The fields and rules are the socket protocol's `Publish` frame's.
///
///     {"order": "8812", "line": "taxi", "state": "driver_assigned",
///      "driver_id": "d-42", "eta_seconds": 240, "lat_e6": 31230400, "lon_e6": 121473700,
///      "cancellation_reason": "...", "idempotency_key": "..."}
enum APIChangeDecoder {
    /// The members a change may have.
    static let knownFields: Set<String> = [
        "order", "line", "state", "driver_id", "eta_seconds", "lat_e6", "lon_e6", "cancellation_reason", "idempotency_key",
    ]

    /// The longest idempotency key accepted.
    static let maxIdempotencyKeyBytes = 128
    /// The longest driver id and cancellation reason accepted.
    static let maxTextBytes = 256

    /// Decodes `value` as a change; `prefix` names where it sits (`""` or `changes[3].`).
    static func change(_ value: JSONValue, prefix: String = "", idempotencyKey header: String? = nil) throws(APIFieldError) -> OrderChange {
        guard case .object(let members) = value else {
            throw APIFieldError(field: prefix.isEmpty ? "body" : String(prefix.dropLast()), "must be a JSON object", code: .invalidField, status: 400)
        }
        var seen = Set<String>()
        for (name, _) in members {
            guard knownFields.contains(name) else {
                throw APIFieldError(field: prefix + name, "is not a field of a change (known: \(knownFields.sorted().joined(separator: ", ")))")
            }
            guard seen.insert(name).inserted else { throw APIFieldError(field: prefix + name, "appears twice") }
        }
        func string(_ name: String, required: Bool = false) throws(APIFieldError) -> String? {
            guard let member = value[name] else {
                if required { throw APIFieldError(field: prefix + name, "is required") }
                return nil
            }
            guard case .string(let text) = member else { throw APIFieldError(field: prefix + name, "must be a string") }
            return text
        }
        func integer(_ name: String) throws(APIFieldError) -> Int64? {
            guard let member = value[name] else { return nil }
            guard case .int(let number) = member else { throw APIFieldError(field: prefix + name, "must be an integer") }
            return number
        }

        let orderText = try string("order", required: true)!
        guard let order = OrderID(orderText) else {
            throw APIFieldError(field: prefix + "order", "'\(orderText)' is not an order id ([A-Za-z0-9_.-], 1 to 64)")
        }
        let lineText = try string("line", required: true)!
        guard let line = BusinessLine(lineText) else {
            throw APIFieldError(field: prefix + "line", "'\(lineText)' is not a business line name", code: .unknownLine)
        }
        let state = try string("state", required: true)!
        guard !state.isEmpty else { throw APIFieldError(field: prefix + "state", "must not be empty") }

        var fields = OrderFields()
        if let driver = try string("driver_id") {
            guard !driver.isEmpty, driver.utf8.count <= maxTextBytes else {
                throw APIFieldError(field: prefix + "driver_id", "must have 1 to \(maxTextBytes) bytes")
            }
            fields.driverID = driver
        }
        if let eta = try integer("eta_seconds") {
            guard let seconds = UInt32(exactly: eta) else {
                throw APIFieldError(field: prefix + "eta_seconds", "must be between 0 and \(UInt32.max)")
            }
            fields.etaSeconds = seconds
        }
        let latitude = try integer("lat_e6")
        let longitude = try integer("lon_e6")
        switch (latitude, longitude) {
        case (nil, nil): break
        case (nil, _): throw APIFieldError(field: prefix + "lat_e6", "is required with lon_e6")
        case (_, nil): throw APIFieldError(field: prefix + "lon_e6", "is required with lat_e6")
        case (let lat?, let lon?):
            guard let latE6 = Int32(exactly: lat), (-90_000_000...90_000_000).contains(latE6) else {
                throw APIFieldError(field: prefix + "lat_e6", "must be micro-degrees from -90000000 to 90000000")
            }
            guard let lonE6 = Int32(exactly: lon), (-180_000_000...180_000_000).contains(lonE6) else {
                throw APIFieldError(field: prefix + "lon_e6", "must be micro-degrees from -180000000 to 180000000")
            }
            fields.location = GeoPoint(latitudeE6: latE6, longitudeE6: lonE6)
        }
        if let reason = try string("cancellation_reason") {
            guard reason.utf8.count <= maxTextBytes else {
                throw APIFieldError(field: prefix + "cancellation_reason", "must have at most \(maxTextBytes) bytes")
            }
            fields.cancellationReason = reason
        }
        var key = try string("idempotency_key") ?? ""
        if key.isEmpty, let header { key = header }
        guard key.utf8.count <= maxIdempotencyKeyBytes else {
            throw APIFieldError(field: prefix + "idempotency_key", "must have at most \(maxIdempotencyKeyBytes) bytes")
        }
        return OrderChange(orderID: order, line: line, targetState: OrderState(state), fields: fields, idempotencyKey: key)
    }
}

/// A request the API refuses before anything is stored, naming the field at fault.
struct APIFieldError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The field (`eta_seconds`, `changes[2].state`, `body`, `changes`).
    let field: String
    /// What is wrong with it.
    let message: String
    /// The numbered wire code (`invalid_field` unless said otherwise).
    let code: ErrorCode
    /// The HTTP status (422 unless said otherwise; 400 for a body that is not the right JSON shape).
    let status: Int

    init(field: String, _ message: String, code: ErrorCode = .invalidField, status: Int = 422) {
        self.field = field
        self.message = message
        self.code = code
        self.status = status
    }

    var description: String { "\(field) \(message)" }
}
