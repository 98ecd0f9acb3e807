import Glibc
import LonglinkCore
internal import CLonglinkProto

/// A state as it travels: a `State` number from the catalog, or a name.
enum CState {
    case code(Longlink__V1__State)
    case name(UnsafeMutablePointer<CChar>)
}

/// The well-known states of the proto's `State` enum, read from protobuf-c's descriptor so the proto is the
/// single source of truth: `STATE_DRIVER_ASSIGNED = 5` is the state named `driver_assigned`.
enum StateCatalog {
    /// State by number (index); nil for numbers the catalog does not hold (0 included).
    static let states: [OrderState?] = {
        var states = [OrderState?](repeating: nil, count: 1)
        for (name, number) in entries {
            if states.count <= Int(number) { states += repeatElement(nil, count: Int(number) + 1 - states.count) }
            states[Int(number)] = OrderState(name)
        }
        return states
    }()

    /// The catalog's states with their numbers in slots indexed by the low bits of their name hashes (linear
    /// probing, at most a quarter full; a code of 0 marks an empty slot), for `code(of:)`.
    private static let slots: [(hash: UInt64, code: UInt32, state: OrderState)] = {
        let known = entries.map { (state: OrderState($0.0), code: $0.1) }
        var size = 8
        while size < known.count * 4 { size *= 2 }
        var slots = [(hash: UInt64, code: UInt32, state: OrderState)](repeating: (0, 0, OrderState("")), count: size)
        for entry in known {
            var index = Int(truncatingIfNeeded: entry.state.nameHash) & (size - 1)
            while slots[index].code != 0 { index = (index + 1) & (size - 1) }
            slots[index] = (entry.state.nameHash, entry.code, entry.state)
        }
        return slots
    }()

    /// The wire number of `state`, nil when the catalog does not hold it: one slot probed by the state's
    /// precomputed hash (the push encoder asks twice per record; a scan of the dozen entries cost about a hundred
    /// instructions each time, a dictionary would run the hasher).
    @inline(__always)
    static func code(of state: OrderState) -> UInt32? {
        slots.withUnsafeBufferPointer { slots in
            let mask = slots.count - 1
            var index = Int(truncatingIfNeeded: state.nameHash) & mask
            while slots[index].code != 0 {
                if slots[index].hash == state.nameHash && slots[index].state.name == state.name { return slots[index].code }
                index = (index + 1) & mask
            }
            return nil
        }
    }

    private static var entries: [(String, UInt32)] {
        let descriptor = longlink__v1__state__descriptor
        var result: [(String, UInt32)] = []
        for index in 0..<Int(descriptor.n_values) {
            let value = descriptor.values[index]
            guard value.value > 0, let name = String(validatingCString: value.name) else { continue }
            result.append((String(name.dropFirst("STATE_".count)).lowercased(), UInt32(value.value)))
        }
        return result
    }

    /// The state with wire number `number`, or nil when the catalog has none.
    static func state(_ number: Longlink__V1__State) -> OrderState? {
        let index = Int(number.rawValue)
        return index < states.count ? states[index] : nil
    }
}

extension ProtobufFrameCodec {
    // MARK: Encoding helpers (Swift → C, no copies: the pointers are valid only inside `body`)

    /// Calls `body` with a NUL-terminated pointer to `string`'s UTF-8 (the string's own storage for
    /// native strings). A string holding a NUL byte cannot travel as a protobuf-c string: `.unencodable`.
    static func withCString(
        _ string: String,
        _ body: (UnsafeMutablePointer<CChar>) -> FrameError?
    ) -> FrameError? {
        string.withCString { pointer in
            guard strlen(pointer) == string.utf8.count else {
                return .unencodable("a string field contains a NUL byte")
            }
            return body(UnsafeMutablePointer(mutating: pointer))
        }
    }

    /// `withCString` for an optional string; `body` gets nil when `string` is nil.
    static func withOptionalCString(
        _ string: String?,
        _ body: (UnsafeMutablePointer<CChar>?) -> FrameError?
    ) -> FrameError? {
        guard let string else { return body(nil) }
        return withCString(string) { body($0) }
    }

    /// Calls `body` with `state` as a catalog number, or as its name when the catalog does not hold it.
    static func withCState(_ state: OrderState, _ body: (CState) -> FrameError?) -> FrameError? {
        if let number = StateCatalog.code(of: state) {
            return body(.code(Longlink__V1__State(rawValue: number)))
        }
        return withCString(state.name) { body(.name($0)) }
    }

    /// `withCState` for an optional state; `body` gets nil when `state` is nil.
    static func withOptionalCState(_ state: OrderState?, _ body: (CState?) -> FrameError?) -> FrameError? {
        guard let state else { return body(nil) }
        return withCState(state) { body($0) }
    }

    /// Calls `body` with a `Position` message, or nil when `position` is nil.
    static func withCPosition(
        _ position: StreamPosition?,
        _ body: (UnsafeMutablePointer<Longlink__V1__Position>?) -> FrameError?
    ) -> FrameError? {
        guard let position else { return body(nil) }
        var message = Longlink__V1__Position()
        longlink__v1__position__init(&message)
        message.epoch = position.epoch
        message.offset = position.offset
        return withUnsafeMutablePointer(to: &message) { body($0) }
    }

    /// Calls `body` with an `OrderFields` message, or nil when no field is set (the field is then not sent).
    static func withCFields(
        _ fields: OrderFields,
        _ body: (UnsafeMutablePointer<Longlink__V1__OrderFields>?) -> FrameError?
    ) -> FrameError? {
        if fields.driverID == nil, fields.etaSeconds == nil, fields.location == nil,
            fields.cancellationReason == nil, fields.payload.isEmpty, fields.toggle == nil
        {
            return body(nil)
        }
        var message = Longlink__V1__OrderFields()
        longlink__v1__order_fields__init(&message)
        setScalars(of: fields, on: &message)
        return withOptionalCString(fields.driverID) { driverID in
            if let driverID {
                message.opt_driver_id_case = LONGLINK__V1__ORDER_FIELDS__OPT_DRIVER_ID_DRIVER_ID
                message.driver_id = driverID
            }
            return withOptionalCString(fields.cancellationReason) { reason in
                if let reason {
                    message.opt_cancellation_reason_case =
                        LONGLINK__V1__ORDER_FIELDS__OPT_CANCELLATION_REASON_CANCELLATION_REASON
                    message.cancellation_reason = reason
                }
                var toggleText: String?
                if case .string(let text) = fields.toggle { toggleText = text }
                return withOptionalCString(toggleText) { toggle in
                    if let toggle {
                        message.opt_toggle_case = LONGLINK__V1__ORDER_FIELDS__OPT_TOGGLE_TOGGLE_STRING
                        message.toggle_string = toggle
                    }
                    return fields.payload.withUnsafeBufferPointer { payload in
                        message.payload = ProtobufCBinaryData(
                            len: payload.count,
                            data: UnsafeMutablePointer(mutating: payload.baseAddress)
                        )
                        return withUnsafeMutablePointer(to: &message) { body($0) }
                    }
                }
            }
        }
    }

    /// Sets the fields of `message` that are not strings or bytes.
    static func setScalars(of fields: OrderFields, on message: inout Longlink__V1__OrderFields) {
        switch fields.toggle {
        case .bool(let on)?:
            message.opt_toggle_case = LONGLINK__V1__ORDER_FIELDS__OPT_TOGGLE_TOGGLE_BOOL
            message.toggle_bool = on ? 1 : 0
        case .rollout(let percent)?:
            message.opt_toggle_case = LONGLINK__V1__ORDER_FIELDS__OPT_TOGGLE_TOGGLE_ROLLOUT_PERCENT
            message.toggle_rollout_percent = UInt32(clamping: percent)
        case .string?, nil:
            break
        }
        if let eta = fields.etaSeconds {
            message.opt_eta_seconds_case = LONGLINK__V1__ORDER_FIELDS__OPT_ETA_SECONDS_ETA_SECONDS
            message.eta_seconds = eta
        }
        if let location = fields.location {
            message.opt_latitude_e6_case = LONGLINK__V1__ORDER_FIELDS__OPT_LATITUDE_E6_LATITUDE_E6
            message.latitude_e6 = location.latitudeE6
            message.opt_longitude_e6_case = LONGLINK__V1__ORDER_FIELDS__OPT_LONGITUDE_E6_LONGITUDE_E6
            message.longitude_e6 = location.longitudeE6
        }
    }

    // MARK: Decoding helpers (C → Swift, validated)

    /// The Swift string of a protobuf-c string field; `.malformed` when it is not UTF-8.
    static func string(_ pointer: UnsafeMutablePointer<CChar>?, _ field: StaticString) throws(FrameError) -> String {
        guard let pointer else { return "" }
        guard let string = String(validatingCString: pointer) else { throw .malformed("\(field) is not UTF-8") }
        return string
    }

    /// A state from its number (which must be in the catalog) or its name.
    static func state(code: Longlink__V1__State) throws(FrameError) -> OrderState {
        guard let state = StateCatalog.state(code) else { throw .invalidValue("unknown state number \(code.rawValue)") }
        return state
    }

    /// A state from its name.
    static func state(name: UnsafeMutablePointer<CChar>?) throws(FrameError) -> OrderState {
        OrderState(try string(name, "state name"))
    }

    /// A position message; `.zero` when absent.
    static func position(_ pointer: UnsafeMutablePointer<Longlink__V1__Position>?) -> StreamPosition {
        guard let position = pointer?.pointee else { return .zero }
        return StreamPosition(epoch: position.epoch, offset: position.offset)
    }

    /// An `OrderFields` message; `.none` when absent. The values are read first and the fields made once (each
    /// `OrderFields` setter would copy its box).
    static func fields(_ pointer: UnsafeMutablePointer<Longlink__V1__OrderFields>?) throws(FrameError) -> OrderFields {
        guard let message = pointer?.pointee else { return .none }
        var driverID: String?
        if message.opt_driver_id_case == LONGLINK__V1__ORDER_FIELDS__OPT_DRIVER_ID_DRIVER_ID {
            driverID = try string(message.driver_id, "driver_id")
        }
        var etaSeconds: UInt32?
        if message.opt_eta_seconds_case == LONGLINK__V1__ORDER_FIELDS__OPT_ETA_SECONDS_ETA_SECONDS {
            etaSeconds = message.eta_seconds
        }
        var location: GeoPoint?
        let hasLatitude = message.opt_latitude_e6_case == LONGLINK__V1__ORDER_FIELDS__OPT_LATITUDE_E6_LATITUDE_E6
        let hasLongitude = message.opt_longitude_e6_case == LONGLINK__V1__ORDER_FIELDS__OPT_LONGITUDE_E6_LONGITUDE_E6
        switch (hasLatitude, hasLongitude) {
        case (true, true):
            location = GeoPoint(latitudeE6: message.latitude_e6, longitudeE6: message.longitude_e6)
        case (false, false):
            break
        default:
            throw .invalidValue("a location needs both latitude_e6 and longitude_e6")
        }
        var cancellationReason: String?
        if message.opt_cancellation_reason_case
            == LONGLINK__V1__ORDER_FIELDS__OPT_CANCELLATION_REASON_CANCELLATION_REASON
        {
            cancellationReason = try string(message.cancellation_reason, "cancellation_reason")
        }
        var payload: [UInt8] = []
        if message.payload.len > 0, let data = message.payload.data {
            payload = Array(UnsafeBufferPointer(start: data, count: message.payload.len))
        }
        var toggle: ToggleValue?
        switch message.opt_toggle_case {
        case LONGLINK__V1__ORDER_FIELDS__OPT_TOGGLE_TOGGLE_BOOL: toggle = .bool(message.toggle_bool != 0)
        case LONGLINK__V1__ORDER_FIELDS__OPT_TOGGLE_TOGGLE_ROLLOUT_PERCENT:
            guard message.toggle_rollout_percent <= 100 else { throw .invalidValue("toggle rollout above 100%") }
            toggle = .rollout(percent: Int(message.toggle_rollout_percent))
        case LONGLINK__V1__ORDER_FIELDS__OPT_TOGGLE_TOGGLE_STRING:
            toggle = .string(try string(message.toggle_string, "toggle_string"))
        default: break
        }
        return OrderFields(
            driverID: driverID, etaSeconds: etaSeconds, location: location,
            cancellationReason: cancellationReason, payload: payload, toggle: toggle
        )
    }

    /// Parses a route field; `.invalidValue` when it is not a valid route URL.
    static func route(_ pointer: UnsafeMutablePointer<CChar>?, _ field: StaticString) throws(FrameError) -> Route {
        let text = try string(pointer, field)
        do {
            return try Route(parsingSubscription: text)  // a subscription's route may be line-wide (`order://taxi/*`)
        } catch {
            throw .invalidValue("\(field): \(error)")
        }
    }

    /// Parses a route that carries records: an order (`order://<line>/<id>`) or a feature toggle
    /// (`config://<app>/<name>`, whose app and name stand in for the line and order id).
    static func orderRoute(
        _ pointer: UnsafeMutablePointer<CChar>?,
        _ field: StaticString
    ) throws(FrameError) -> (route: Route, line: BusinessLine, id: OrderID) {
        let route = try route(pointer, field)
        guard let order = route.recordKey else { throw .invalidValue("\(field): '\(route)' does not carry records") }
        return (route, order.line, order.id)
    }
}
