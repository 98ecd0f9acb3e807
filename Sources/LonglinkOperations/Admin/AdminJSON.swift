public import LonglinkCore
public import LonglinkHTTP
public import LonglinkJSON

/// The admin API's JSON shapes for records, snapshots and refusals. Absent fields are omitted.
public enum AdminJSON {
    /// A stored record as the tap and order history show it:
    /// `{"route","epoch","offset","from","to","time_ms","driver_id","eta_seconds","lat_e6","lon_e6","cancellation_reason"}`.
    public static func record(_ record: OrderChangeRecord, route: Route) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("route", .string(route.text)),
            ("epoch", .int(Int64(record.position.epoch))),
            ("offset", .int(Int64(clamping: record.position.offset))),
        ]
        if let from = record.fromState { members.append(("from", .string(from.name))) }
        members.append(("to", .string(record.toState.name)))
        members.append(("time_ms", .int(Int64(clamping: record.timestampMillis))))
        members += fields(record.fields)
        return .object(members)
    }

    /// An order's current state: `{"route","line","order","state","epoch","offset","created_ms","updated_ms",...fields}`.
    public static func snapshot(_ snapshot: OrderSnapshot) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("route", .string(snapshot.route.text)),
            ("line", .string(snapshot.line.name)),
            ("order", .string(snapshot.orderID.rawValue)),
            ("state", .string(snapshot.state.name)),
            ("epoch", .int(Int64(snapshot.position.epoch))),
            ("offset", .int(Int64(clamping: snapshot.position.offset))),
            ("created_ms", .int(Int64(clamping: snapshot.createdAtMillis))),
            ("updated_ms", .int(Int64(clamping: snapshot.updatedAtMillis))),
        ]
        members += fields(snapshot.fields)
        return .object(members)
    }

    /// The set fields of a change or snapshot, flat.
    static func fields(_ fields: OrderFields) -> [(String, JSONValue)] {
        var members: [(String, JSONValue)] = []
        if let driver = fields.driverID { members.append(("driver_id", .string(driver))) }
        if let eta = fields.etaSeconds { members.append(("eta_seconds", .int(Int64(eta)))) }
        if let location = fields.location {
            members.append(("lat_e6", .int(Int64(location.latitudeE6))))
            members.append(("lon_e6", .int(Int64(location.longitudeE6))))
        }
        if let reason = fields.cancellationReason { members.append(("cancellation_reason", .string(reason))) }
        if !fields.payload.isEmpty { members.append(("payload_bytes", .int(Int64(fields.payload.count)))) }
        switch fields.toggle {
        case .bool(let on)?: members.append(("toggle", .bool(on)))
        case .rollout(let percent)?: members.append(("toggle", .object([("rollout", .int(Int64(percent)))])))
        case .string(let text)?: members.append(("toggle", .string(text)))
        case nil: break
        }
        return members
    }

    /// A Store refusal as an HTTP error: the status that fits, the numbered wire code and the message.
    public static func refusal(_ error: StoreError) -> HTTPResponse {
        let status: HTTPStatus =
            switch error {
            case .illegalTransition, .unknownState, .conflict, .idempotencyConflict: .conflict
            case .unknownOrder, .unknownLine: .notFound
            case .invalidField: .unprocessableContent
            case .storage, .closed: .serviceUnavailable
            }
        return .json(
            .object([
                ("error", .string(error.description)),
                ("code", .int(Int64(error.code.rawValue))),
                ("status", .int(Int64(status.code))),
            ]),
            status: status
        )
    }

    /// A publish the caller's token does not allow: 403 with `{"error","code":403,"status":403}`.
    public static func refusal(_ denial: PublishDenial) -> HTTPResponse {
        .json(
            .object([
                ("error", .string("\(ErrorCode.permissionDenied): \(denial)")),
                ("code", .int(Int64(ErrorCode.permissionDenied.rawValue))),
                ("status", .int(Int64(HTTPStatus.forbidden.code))),
            ]),
            status: .forbidden
        )
    }
}
