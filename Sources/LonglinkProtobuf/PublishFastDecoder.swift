import LonglinkCore

/// The hot client frame read straight from its wire bytes: a `ClientFrame` whose only field is `publish = 13`,
/// decoded in place without protobuf-c's unpack, its arena, C strings or the varint re-check.
///
/// It takes only the plain shape of a publish and leaves everything else to protobuf-c (`nil` means "ask the
/// codec", never "refused"): every field at most once, no unknown field, no field of another wire type, varints
/// of at most five bytes within 32 bits, a bool of one byte 0 or 1, a known state number, strings of ASCII without
/// NUL, and a location with both coordinates or neither. For such a body the result is exactly
/// what protobuf-c and `ProtobufFrameCodec.clientFrame(from:)` give (`FastDecoderConformanceTests`), and a body
/// that protobuf-c refuses never has that shape. So hostile input (cut or overlong varints, wrong wire types,
/// duplicate or unknown fields, lengths past the end) always takes the codec's path and gets its answer.
///
/// A publish with fields allocates the payload's bytes and the fields' box; without fields it allocates nothing
/// (order ids, lines and state names up to 15 bytes are stored inline in their `String`s). The request it gives
/// carries the order id, line and target state as checked domain values (`PublishRequest(requestID:order:…)`).
enum PublishFastDecoder {
    /// `ClientFrame.publish`: field 13, length-delimited.
    static let publishKey: UInt8 = 13 << 3 | 2

    /// The publish in `body`, or nil when `body` is not a plain publish (then the codec decides).
    static func decode(_ body: UnsafeRawBufferPointer) -> PublishRequest? {
        guard let base = body.baseAddress, body.count >= 2 else { return nil }
        var cursor = base.assumingMemoryBound(to: UInt8.self)
        let end = cursor + body.count
        guard cursor.pointee == publishKey else { return nil }
        cursor += 1
        guard let length = WireCursor.varint32(&cursor, end), Int(length) == end - cursor else { return nil }
        return publish(cursor, end)
    }

    /// The fields of one `Publish` message, `start..<end`.
    ///
    /// The order id and the line are kept as byte ranges while the fields are read, then each is checked (and the
    /// id hashed) once, by `OrderID(utf8:)` and `BusinessLine(utf8:)`: the request carries the domain values, so
    /// the peer does not scan the texts again. An id or a line that is not valid travels as text (when it is
    /// plain ASCII), for the peer to refuse with its own message.
    private static func publish(_ start: UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>) -> PublishRequest? {
        var cursor = start
        var seen: UInt32 = 0
        var requestID: UInt32 = 0
        var orderID = UnsafeBufferPointer<UInt8>(start: start, count: 0)
        var line = UnsafeBufferPointer<UInt8>(start: start, count: 0)
        var target: OrderState?
        var fields = OrderFields.none
        var idempotencyKey = ""
        var wantsReceipts = false
        while cursor < end {
            let key = cursor.pointee
            cursor += 1
            guard key < 0x80, WireCursor.firstTime(key, &seen) else { return nil }
            switch key {
            case 1 << 3 | 0:
                guard let value = WireCursor.varint32(&cursor, end) else { return nil }
                requestID = value
            case 2 << 3 | 2:
                guard let bytes = WireCursor.bytes(&cursor, end) else { return nil }
                orderID = bytes
            case 3 << 3 | 2:
                guard let bytes = WireCursor.bytes(&cursor, end) else { return nil }
                line = bytes
            case 4 << 3 | 0:
                guard let value = WireCursor.varint32(&cursor, end), value <= UInt32(Int32.max),
                    let state = StateCatalog.state(number: value)
                else { return nil }
                target = state
            case 5 << 3 | 2:
                guard let text = WireCursor.asciiString(&cursor, end) else { return nil }
                target = OrderState(text)
            case 6 << 3 | 2:
                guard let length = WireCursor.length(&cursor, end),
                    let decoded = orderFields(cursor, cursor + length)
                else { return nil }
                cursor += length
                fields = decoded
            case 7 << 3 | 2:
                guard let text = WireCursor.asciiString(&cursor, end) else { return nil }
                idempotencyKey = text
            case 8 << 3 | 0:
                guard let value = WireCursor.bool(&cursor, end) else { return nil }
                wantsReceipts = value
            default:
                return nil
            }
        }
        // Both members of the `target` oneof (protobuf-c keeps the last), or neither (the codec refuses it).
        let targetMembers = seen & (1 << 4 | 1 << 5)
        guard let target, targetMembers != 1 << 4 | 1 << 5 else { return nil }
        if let order = OrderID(utf8: orderID), let businessLine = BusinessLine(utf8: line) {
            return PublishRequest(
                requestID: requestID,
                order: order,
                line: businessLine,
                target: target,
                fields: fields,
                idempotencyKey: idempotencyKey,
                wantsReceipts: wantsReceipts
            )
        }
        guard let orderIDText = WireCursor.asciiText(orderID), let lineText = WireCursor.asciiText(line) else {
            return nil
        }
        return PublishRequest(
            requestID: requestID,
            orderID: orderIDText,
            line: lineText,
            targetState: target.name,
            fields: fields,
            idempotencyKey: idempotencyKey,
            wantsReceipts: wantsReceipts
        )
    }

    /// One `OrderFields` message, `start..<end`.
    private static func orderFields(_ start: UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>) -> OrderFields? {
        var cursor = start
        var seen: UInt32 = 0
        var driverID: String?
        var etaSeconds: UInt32?
        var latitude: Int32 = 0
        var longitude: Int32 = 0
        var cancellationReason: String?
        var payload: UnsafeBufferPointer<UInt8>?
        var toggle: ToggleValue?
        while cursor < end {
            let key = cursor.pointee
            cursor += 1
            guard key < 0x80, WireCursor.firstTime(key, &seen) else { return nil }
            switch key {
            case 1 << 3 | 2:
                guard let text = WireCursor.asciiString(&cursor, end) else { return nil }
                driverID = text
            case 2 << 3 | 0:
                guard let value = WireCursor.varint32(&cursor, end) else { return nil }
                etaSeconds = value
            case 3 << 3 | 0:
                guard let value = WireCursor.varint32(&cursor, end) else { return nil }
                latitude = WireCursor.unzigzag(value)
            case 4 << 3 | 0:
                guard let value = WireCursor.varint32(&cursor, end) else { return nil }
                longitude = WireCursor.unzigzag(value)
            case 5 << 3 | 2:
                guard let text = WireCursor.asciiString(&cursor, end) else { return nil }
                cancellationReason = text
            case 6 << 3 | 2:
                guard let length = WireCursor.length(&cursor, end) else { return nil }
                payload = UnsafeBufferPointer(start: cursor, count: length)
                cursor += length
            case 7 << 3 | 0:
                guard let value = WireCursor.bool(&cursor, end) else { return nil }
                toggle = .bool(value)
            case 8 << 3 | 0:
                guard let value = WireCursor.varint32(&cursor, end), value <= 100 else { return nil }
                toggle = .rollout(percent: Int(value))
            case 9 << 3 | 2:
                guard let text = WireCursor.asciiString(&cursor, end) else { return nil }
                toggle = .string(text)
            default:
                return nil
            }
        }
        // More than one member of the `opt_toggle` oneof, or half a location: the codec's business.
        let toggleMembers = seen & (1 << 7 | 1 << 8 | 1 << 9)
        guard toggleMembers & (toggleMembers &- 1) == 0 else { return nil }
        let coordinates = seen & (1 << 3 | 1 << 4)
        guard coordinates == 0 || coordinates == 1 << 3 | 1 << 4 else { return nil }
        var bytes: [UInt8] = []
        if let payload, payload.count > 0 { bytes = Array(payload) }
        return OrderFields(
            driverID: driverID,
            etaSeconds: etaSeconds,
            location: coordinates == 0 ? nil : GeoPoint(latitudeE6: latitude, longitudeE6: longitude),
            cancellationReason: cancellationReason,
            payload: bytes,
            toggle: toggle
        )
    }
}

extension StateCatalog {
    /// The catalog's state with wire number `number`; nil for 0 and numbers it does not hold.
    static func state(number: UInt32) -> OrderState? {
        let index = Int(number)
        return index < states.count ? states[index] : nil
    }
}
