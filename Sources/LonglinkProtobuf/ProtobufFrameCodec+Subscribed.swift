import LonglinkCore
internal import CLonglinkProto

/// `subscribed` frames carry a snapshot and any number of records, too irregular for the nested closures
/// of the other frames. They are rare (one per subscription), so they are built from C copies owned by a
/// `CAllocations`, freed when the frame is packed.
extension ProtobufFrameCodec {
    static func withCSubscribed(
        _ subscribed: Subscribed,
        _ body: (UnsafePointer<CServerFrame>) -> FrameError?
    ) -> FrameError? {
        let storage = CAllocations()
        var message = Longlink__V1__Subscribed()
        longlink__v1__subscribed__init(&message)
        do throws(FrameError) {
            message.request_id = subscribed.requestID
            message.recovered = subscribed.recovered ? 1 : 0
            message.route = try storage.string(subscribed.route.text)
            message.position = storage.position(subscribed.position)
            if let snapshot = subscribed.snapshot {
                message.snapshot = try storage.snapshot(snapshot)
            }
            if !subscribed.missed.isEmpty {
                let records = storage.array(of: UnsafeMutablePointer<Longlink__V1__Record>?.self,
                                            count: subscribed.missed.count)
                for (index, record) in subscribed.missed.enumerated() {
                    records[index] = try storage.record(record)
                }
                message.n_missed = subscribed.missed.count
                message.missed = records
            }
        } catch {
            return error
        }
        let failure = wrap(&message, LONGLINK__V1__SERVER_FRAME__KIND_SUBSCRIBED, { $0.subscribed = $1 }, body)
        withExtendedLifetime(storage) {}
        return failure
    }
}

/// C copies of strings, bytes and structs for one cold frame; everything is freed with the object.
final class CAllocations {
    private var pointers: [UnsafeMutableRawPointer] = []

    deinit {
        for pointer in pointers { pointer.deallocate() }
    }

    /// A NUL-terminated copy of `string`; `.unencodable` when it holds a NUL byte.
    func string(_ string: String) throws(FrameError) -> UnsafeMutablePointer<CChar> {
        let utf8 = string.utf8
        if utf8.contains(0) { throw .unencodable("a string field contains a NUL byte") }
        let copy = array(of: CChar.self, count: utf8.count + 1)
        var index = 0
        for byte in utf8 {
            copy[index] = CChar(bitPattern: byte)
            index += 1
        }
        copy[index] = 0
        return copy
    }

    /// A protobuf-c `bytes` value holding a copy of `bytes`.
    func bytes(_ bytes: [UInt8]) -> ProtobufCBinaryData {
        guard !bytes.isEmpty else { return ProtobufCBinaryData(len: 0, data: nil) }
        let copy = array(of: UInt8.self, count: bytes.count)
        _ = UnsafeMutableBufferPointer(start: copy, count: bytes.count).initialize(from: bytes)
        return ProtobufCBinaryData(len: bytes.count, data: copy)
    }

    /// Uninitialised room for `count` values of `type`.
    func array<T>(of type: T.Type, count: Int) -> UnsafeMutablePointer<T> {
        let pointer = UnsafeMutablePointer<T>.allocate(capacity: Swift.max(count, 1))
        pointers.append(UnsafeMutableRawPointer(pointer))
        return pointer
    }

    /// A copy of `value`.
    func value<T>(_ value: T) -> UnsafeMutablePointer<T> {
        let pointer = array(of: T.self, count: 1)
        pointer.initialize(to: value)
        return pointer
    }

    func position(_ position: StreamPosition) -> UnsafeMutablePointer<Longlink__V1__Position> {
        var message = Longlink__V1__Position()
        longlink__v1__position__init(&message)
        message.epoch = position.epoch
        message.offset = position.offset
        return value(message)
    }

    func fields(_ fields: OrderFields) throws(FrameError) -> UnsafeMutablePointer<Longlink__V1__OrderFields>? {
        if fields == .none { return nil }
        var message = Longlink__V1__OrderFields()
        longlink__v1__order_fields__init(&message)
        ProtobufFrameCodec.setScalars(of: fields, on: &message)
        if let driverID = fields.driverID {
            message.opt_driver_id_case = LONGLINK__V1__ORDER_FIELDS__OPT_DRIVER_ID_DRIVER_ID
            message.driver_id = try string(driverID)
        }
        if let reason = fields.cancellationReason {
            message.opt_cancellation_reason_case =
                LONGLINK__V1__ORDER_FIELDS__OPT_CANCELLATION_REASON_CANCELLATION_REASON
            message.cancellation_reason = try string(reason)
        }
        if case .string(let text) = fields.toggle {
            message.opt_toggle_case = LONGLINK__V1__ORDER_FIELDS__OPT_TOGGLE_TOGGLE_STRING
            message.toggle_string = try string(text)
        }
        message.payload = bytes(fields.payload)
        return value(message)
    }

    /// A state as a catalog number or a copied name.
    func state(_ state: OrderState) throws(FrameError) -> CState {
        if let number = StateCatalog.code(of: state) { return .code(Longlink__V1__State(rawValue: number)) }
        return .name(try string(state.name))
    }

    func snapshot(_ snapshot: OrderSnapshot) throws(FrameError) -> UnsafeMutablePointer<Longlink__V1__Snapshot> {
        var message = Longlink__V1__Snapshot()
        longlink__v1__snapshot__init(&message)
        switch try state(snapshot.state) {
        case .code(let code):
            message.state_case = LONGLINK__V1__SNAPSHOT__STATE_STATE_CODE
            message.state_code = code
        case .name(let name):
            message.state_case = LONGLINK__V1__SNAPSHOT__STATE_STATE_NAME
            message.state_name = name
        }
        message.fields = try fields(snapshot.fields)
        message.position = position(snapshot.position)
        message.created_at_ms = snapshot.createdAtMillis
        message.updated_at_ms = snapshot.updatedAtMillis
        return value(message)
    }

    func record(_ record: OrderChangeRecord) throws(FrameError) -> UnsafeMutablePointer<Longlink__V1__Record> {
        var message = Longlink__V1__Record()
        longlink__v1__record__init(&message)
        message.offset = record.position.offset
        message.epoch = record.position.epoch
        message.timestamp_ms = record.timestampMillis
        switch try state(record.toState) {
        case .code(let code):
            message.to_case = LONGLINK__V1__RECORD__TO_TO_STATE
            message.to_state = code
        case .name(let name):
            message.to_case = LONGLINK__V1__RECORD__TO_TO_STATE_NAME
            message.to_state_name = name
        }
        if let fromState = record.fromState {
            switch try state(fromState) {
            case .code(let code):
                message.from_case = LONGLINK__V1__RECORD__FROM_FROM_STATE
                message.from_state = code
            case .name(let name):
                message.from_case = LONGLINK__V1__RECORD__FROM_FROM_STATE_NAME
                message.from_state_name = name
            }
        }
        message.fields = try fields(record.fields)
        return value(message)
    }
}
