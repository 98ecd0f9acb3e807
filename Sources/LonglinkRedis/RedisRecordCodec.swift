public import LonglinkCore

/// How records and snapshots are laid out in Redis, readable with `redis-cli`:
/// - a stream entry (one record) has the fields `to`, `ts` and, when set, `from`, `key`, `driver`, `eta`, `loc`
///   (`LAT_E6,LON_E6`), `reason`, `payload`; the entry id is `OFFSET-0`;
/// - a snapshot hash has `state`, `offset`, `created`, `updated` and the set fields under the same names;
/// - a pub/sub message is a compact binary record (`message(_:)`), decoded by every node's broker.
public enum RedisRecordCodec {
    // MARK: Stream entries and hashes

    /// The field/value pairs of a record's stream entry, flattened (`[name, value, name, value, ...]`).
    static func entryFields(_ record: OrderChangeRecord) -> [[UInt8]] {
        var pairs: [[UInt8]] = [Array("to".utf8), Array(record.toState.name.utf8), Array("ts".utf8), digits(record.timestampMillis)]
        if let from = record.fromState { pairs += [Array("from".utf8), Array(from.name.utf8)] }
        if !record.idempotencyKey.isEmpty { pairs += [Array("key".utf8), Array(record.idempotencyKey.utf8)] }
        appendFields(record.fields, to: &pairs)
        return pairs
    }

    /// The field/value pairs of a snapshot hash (without the write token).
    static func snapshotFields(_ snapshot: OrderSnapshot) -> [[UInt8]] {
        var pairs: [[UInt8]] = [
            Array("state".utf8), Array(snapshot.state.name.utf8),
            Array("offset".utf8), digits(snapshot.position.offset),
            Array("created".utf8), digits(snapshot.createdAtMillis),
            Array("updated".utf8), digits(snapshot.updatedAtMillis),
        ]
        appendFields(snapshot.fields, to: &pairs)
        return pairs
    }

    private static func appendFields(_ fields: OrderFields, to pairs: inout [[UInt8]]) {
        if let driver = fields.driverID { pairs += [Array("driver".utf8), Array(driver.utf8)] }
        if let eta = fields.etaSeconds { pairs += [Array("eta".utf8), digits(UInt64(eta))] }
        if let location = fields.location {
            pairs += [Array("loc".utf8), Array("\(location.latitudeE6),\(location.longitudeE6)".utf8)]
        }
        if let reason = fields.cancellationReason { pairs += [Array("reason".utf8), Array(reason.utf8)] }
        if !fields.payload.isEmpty { pairs += [Array("payload".utf8), fields.payload] }
    }

    /// A flat `[name, value, ...]` reply as a dictionary.
    static func pairs(_ reply: RedisReply?) -> [String: [UInt8]] {
        guard let elements = reply?.array else { return [:] }
        var result: [String: [UInt8]] = [:]
        var index = 0
        while index + 1 < elements.count {
            if case .bulk(let name) = elements[index], case .bulk(let value) = elements[index + 1] {
                result[String(decoding: name, as: UTF8.self)] = value
            }
            index += 2
        }
        return result
    }

    /// The snapshot in a hash (`HGETALL`), nil when the hash is empty. Also returns the write token.
    static func snapshot(_ fields: [String: [UInt8]], line: BusinessLine, order: OrderID, epoch: UInt32)
        -> (snapshot: OrderSnapshot, token: String)?
    {
        guard let state = text(fields["state"]), let offset = number(fields["offset"]),
            let created = number(fields["created"]), let updated = number(fields["updated"])
        else { return nil }
        let snapshot = OrderSnapshot(
            orderID: order,
            line: line,
            state: OrderState(state),
            fields: orderFields(fields),
            position: StreamPosition(epoch: epoch, offset: offset),
            createdAtMillis: created,
            updatedAtMillis: updated
        )
        return (snapshot, text(fields["w"]) ?? "")
    }

    /// The record in a stream entry (`[id, [name, value, ...]]`), nil when it is malformed.
    static func record(entry: RedisReply, line: BusinessLine, order: OrderID, epoch: UInt32) -> OrderChangeRecord? {
        guard let parts = entry.array, parts.count == 2, let id = parts[0].string,
            let offset = UInt64(id.prefix { $0 != "-" })
        else { return nil }
        let fields = pairs(parts[1])
        guard let to = text(fields["to"]), let ts = number(fields["ts"]) else { return nil }
        return OrderChangeRecord(
            orderID: order,
            line: line,
            fromState: text(fields["from"]).map { OrderState($0) },
            toState: OrderState(to),
            fields: orderFields(fields),
            position: StreamPosition(epoch: epoch, offset: offset),
            timestampMillis: ts,
            idempotencyKey: text(fields["key"]) ?? ""
        )
    }

    private static func orderFields(_ fields: [String: [UInt8]]) -> OrderFields {
        var location: GeoPoint?
        if let loc = text(fields["loc"]) {
            let parts = loc.split(separator: ",")
            if parts.count == 2, let lat = Int32(parts[0]), let lon = Int32(parts[1]) {
                location = GeoPoint(latitudeE6: lat, longitudeE6: lon)
            }
        }
        return OrderFields(
            driverID: text(fields["driver"]),
            etaSeconds: number(fields["eta"]).flatMap { UInt32(exactly: $0) },
            location: location,
            cancellationReason: text(fields["reason"]),
            payload: fields["payload"] ?? []
        )
    }

    static func digits(_ value: UInt64) -> [UInt8] { Array(String(value).utf8) }
    private static func text(_ bytes: [UInt8]?) -> String? { bytes.map { String(decoding: $0, as: UTF8.self) } }
    private static func number(_ bytes: [UInt8]?) -> UInt64? { text(bytes).flatMap { UInt64($0) } }

    // MARK: Pub/sub messages

    private static let version: UInt8 = 1

    /// A record as one binary pub/sub message: version, epoch, offset, timestamp, line, id, a presence byte, then
    /// the states and set fields (varints and length-prefixed bytes). The idempotency key is not included
    /// (subscribers never see it). A feature toggle's record (on a `config://` route) has presence bit 32 and its
    /// value after the payload: a byte (0 off, 1 on, 2 rollout, 3 string), then the percentage or the text.
    public static func message(_ record: OrderChangeRecord) -> [UInt8] {
        var out: [UInt8] = [version]
        out.reserveCapacity(64 + record.fields.payload.count)
        varint(UInt64(record.position.epoch), &out)
        varint(record.position.offset, &out)
        varint(record.timestampMillis, &out)
        bytes(Array(record.line.name.utf8), &out)
        bytes(Array(record.orderID.rawValue.utf8), &out)
        let fields = record.fields
        var flags: UInt8 = 0
        if record.fromState != nil { flags |= 1 }
        if fields.driverID != nil { flags |= 2 }
        if fields.etaSeconds != nil { flags |= 4 }
        if fields.location != nil { flags |= 8 }
        if fields.cancellationReason != nil { flags |= 16 }
        let toggle = record.kind == .config ? fields.toggle : nil
        if toggle != nil { flags |= 32 }
        out.append(flags)
        if let from = record.fromState { bytes(Array(from.name.utf8), &out) }
        bytes(Array(record.toState.name.utf8), &out)
        if let driver = fields.driverID { bytes(Array(driver.utf8), &out) }
        if let eta = fields.etaSeconds { varint(UInt64(eta), &out) }
        if let location = fields.location {
            varint(UInt64(UInt32(bitPattern: location.latitudeE6)), &out)
            varint(UInt64(UInt32(bitPattern: location.longitudeE6)), &out)
        }
        if let reason = fields.cancellationReason { bytes(Array(reason.utf8), &out) }
        bytes(fields.payload, &out)
        switch toggle {
        case .bool(let on)?: out.append(on ? 1 : 0)
        case .rollout(let percent)?:
            out.append(2)
            varint(UInt64(clamping: percent), &out)
        case .string(let text)?:
            out.append(3)
            bytes(Array(text.utf8), &out)
        case nil: break
        }
        return out
    }

    /// Decodes `message(_:)`; nil when the bytes are not such a message.
    public static func record(message: UnsafeRawBufferPointer) -> OrderChangeRecord? {
        var reader = Reader(buffer: message)
        guard reader.byte() == version, let epoch = reader.varint().flatMap({ UInt32(exactly: $0) }),
            let offset = reader.varint(), let ts = reader.varint(),
            let line = reader.text().flatMap(BusinessLine.init), let id = reader.text().flatMap(OrderID.init),
            let flags = reader.byte()
        else { return nil }
        var from: OrderState?
        if flags & 1 != 0 {
            guard let name = reader.text() else { return nil }
            from = OrderState(name)
        }
        guard let to = reader.text() else { return nil }
        var fields = OrderFields()
        if flags & 2 != 0 { fields.driverID = reader.text() ?? "" }
        if flags & 4 != 0 { fields.etaSeconds = reader.varint().flatMap { UInt32(exactly: $0) } }
        if flags & 8 != 0 {
            guard let lat = reader.varint().flatMap({ UInt32(exactly: $0) }),
                let lon = reader.varint().flatMap({ UInt32(exactly: $0) })
            else { return nil }
            fields.location = GeoPoint(latitudeE6: Int32(bitPattern: lat), longitudeE6: Int32(bitPattern: lon))
        }
        if flags & 16 != 0 { fields.cancellationReason = reader.text() ?? "" }
        guard let payload = reader.bytes() else { return nil }
        fields.payload = payload
        if flags & 32 != 0 {
            switch reader.byte() {
            case 0?: fields.toggle = .bool(false)
            case 1?: fields.toggle = .bool(true)
            case 2?:
                guard let percent = reader.varint(), percent <= 100 else { return nil }
                fields.toggle = .rollout(percent: Int(percent))
            case 3?:
                guard let text = reader.text() else { return nil }
                fields.toggle = .string(text)
            default: return nil
            }
        }
        return OrderChangeRecord(
            orderID: id,
            line: line,
            fromState: from,
            toState: OrderState(to),
            fields: fields,
            position: StreamPosition(epoch: epoch, offset: offset),
            timestampMillis: ts,
            kind: flags & 32 != 0 ? .config : .order
        )
    }

    private static func varint(_ value: UInt64, _ out: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        out.append(UInt8(value))
    }

    private static func bytes(_ value: [UInt8], _ out: inout [UInt8]) {
        varint(UInt64(value.count), &out)
        out.append(contentsOf: value)
    }

    private struct Reader {
        let buffer: UnsafeRawBufferPointer
        var index = 0

        mutating func byte() -> UInt8? {
            guard index < buffer.count else { return nil }
            defer { index += 1 }
            return buffer[index]
        }

        mutating func varint() -> UInt64? {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while shift < 64, let next = byte() {
                value |= UInt64(next & 0x7F) << shift
                if next & 0x80 == 0 { return value }
                shift += 7
            }
            return nil
        }

        mutating func bytes() -> [UInt8]? {
            guard let count = varint(), count <= UInt64(buffer.count - index) else { return nil }
            defer { index += Int(count) }
            return Array(UnsafeRawBufferPointer(rebasing: buffer[index..<(index + Int(count))]))
        }

        mutating func text() -> String? { bytes().map { String(decoding: $0, as: UTF8.self) } }
    }
}
