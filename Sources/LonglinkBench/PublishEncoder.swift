import LonglinkCore

/// Writes the fan-out publisher's `publish` frames straight into the connection's staging array, without building
/// Swift values or calling protobuf-c per publish: on many routes the load generator sends one publish per delivery,
/// and encoding each through `ProtobufFrameCodec` (an `OrderID`, a `PublishRequest`, C strings, pack) cost it more
/// than the gateway spent storing it.
///
/// The frame is the codec's: `ClientFrame.publish = 13` holding `Publish.request_id = 1, order_id = 2, line = 3`,
/// the target state (`target_state = 4` for a built-in state, `target_state_name = 5` otherwise: taken once per state
/// from the codec's own encoding, so the two cannot disagree), `fields = 6` (`OrderFields.driver_id = 1,
/// payload = 6`) and `idempotency_key = 7`, after the varint length prefix. `PublishEncoderTests` decodes the
/// result with the codec.
enum PublishEncoder {
    /// Appends one framed publish of `orderID` on `line` to `target`, with the target state's encoded field (from
    /// `stateField(_:)`), the stamped payload of `payloadSize` bytes (see `BenchPayload`), `driverID` in the fields
    /// when given and `idempotencyKey` when not empty.
    static func append(
        requestID: UInt32,
        orderID: UnsafeRawBufferPointer,
        line: UnsafeRawBufferPointer,
        stateField: [UInt8],
        driverID: UnsafeRawBufferPointer?,
        stamp: (timestamp: UInt64, sequence: UInt64),
        payloadSize: Int,
        idempotencyKey: [UInt8],
        to target: inout [UInt8]
    ) {
        let payloadSize = max(payloadSize, BenchPayload.minimumSize)
        var fieldsSize = 1 + Self.varintSize(UInt64(payloadSize)) + payloadSize
        if let driverID { fieldsSize += 1 + Self.varintSize(UInt64(driverID.count)) + driverID.count }
        var publishSize = 1 + Self.varintSize(UInt64(requestID))
        publishSize += 1 + Self.varintSize(UInt64(orderID.count)) + orderID.count
        publishSize += 1 + Self.varintSize(UInt64(line.count)) + line.count
        publishSize += stateField.count
        publishSize += 1 + Self.varintSize(UInt64(fieldsSize)) + fieldsSize
        if !idempotencyKey.isEmpty { publishSize += 1 + Self.varintSize(UInt64(idempotencyKey.count)) + idempotencyKey.count }
        let bodySize = 1 + Self.varintSize(UInt64(publishSize)) + publishSize
        let frameSize = Self.varintSize(UInt64(bodySize)) + bodySize

        // Written on the stack, then appended in one copy (appending a repeated zero byte by byte and overwriting it
        // cost more than the encoding).
        withUnsafeTemporaryAllocation(byteCount: frameSize, alignment: 8) { raw in
            var out = RawWriter(raw.baseAddress!)
            out.varint(UInt64(bodySize))
            out.byte(13 << 3 | 2)
            out.varint(UInt64(publishSize))
            out.byte(1 << 3 | 0)
            out.varint(UInt64(requestID))
            out.field(2 << 3 | 2, orderID)
            out.field(3 << 3 | 2, line)
            stateField.withUnsafeBytes { out.bytes($0) }
            out.byte(6 << 3 | 2)
            out.varint(UInt64(fieldsSize))
            if let driverID { out.field(1 << 3 | 2, driverID) }
            out.byte(6 << 3 | 2)
            out.varint(UInt64(payloadSize))
            out.stamp(stamp, size: payloadSize)
            if !idempotencyKey.isEmpty { idempotencyKey.withUnsafeBytes { out.field(7 << 3 | 2, $0) } }
            precondition(out.position == raw.baseAddress! + frameSize, "publish frame size mismatch")
            target.append(contentsOf: UnsafeRawBufferPointer(raw))
        }
    }

    /// The target-state field (key and value) of a publish to `state`, taken out of the codec's own encoding.
    static func stateField(_ state: OrderState) -> [UInt8] {
        let frame = BenchConnection.encode(.publish(PublishRequest(requestID: 1, orderID: "x", line: "taxi", targetState: state.name)))
        var field: [UInt8] = []
        frame.withUnsafeBytes { raw in
            var cursor = raw.baseAddress!.assumingMemoryBound(to: UInt8.self)
            let end = cursor + raw.count
            guard WireBytes.varint(&cursor, end) != nil, WireBytes.varint(&cursor, end) == 13 << 3 | 2,
                let publish = WireBytes.lengthDelimited(&cursor, end)
            else { return }
            var inner = publish.baseAddress!.assumingMemoryBound(to: UInt8.self)
            let publishEnd = inner + publish.count
            while inner < publishEnd, let key = WireBytes.varint(&inner, publishEnd) {
                if key == 4 << 3 | 0, let code = WireBytes.varint(&inner, publishEnd) {
                    field = [UInt8(key)] + Self.varint(code)
                    return
                }
                if key == 5 << 3 | 2, let name = WireBytes.lengthDelimited(&inner, publishEnd) {
                    field = [UInt8(key)] + Self.varint(UInt64(name.count)) + Array(name)
                    return
                }
                guard WireBytes.skip(&inner, publishEnd, wireType: UInt8(key & 7)) else { return }
            }
        }
        precondition(!field.isEmpty, "the codec's publish frame has no target state")
        return field
    }

    /// The bytes of `value` as a varint.
    static func varint(_ value: UInt64) -> [UInt8] {
        var bytes: [UInt8] = []
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
        return bytes
    }

    /// How many bytes `value` takes as a varint.
    static func varintSize(_ value: UInt64) -> Int {
        (64 - (value | 1).leadingZeroBitCount + 6) / 7
    }
}

/// Writes protobuf wire bytes forward from a pointer into memory the caller sized (a value, so its position is
/// a plain local, not a captured variable checked for exclusive access on every byte).
struct RawWriter {
    private(set) var position: UnsafeMutableRawPointer

    init(_ start: UnsafeMutableRawPointer) { position = start }

    mutating func byte(_ value: UInt8) {
        position.storeBytes(of: value, as: UInt8.self)
        position += 1
    }

    mutating func varint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            byte(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        byte(UInt8(rest))
    }

    mutating func bytes(_ source: UnsafeRawBufferPointer) {
        guard let base = source.baseAddress, source.count > 0 else { return }
        position.copyMemory(from: base, byteCount: source.count)
        position += source.count
    }

    /// A length-delimited field: key, length, bytes.
    mutating func field(_ key: UInt8, _ source: UnsafeRawBufferPointer) {
        byte(key)
        varint(UInt64(source.count))
        bytes(source)
    }

    /// A `BenchPayload` of `size` bytes: the stamp, then padding.
    mutating func stamp(_ stamp: (timestamp: UInt64, sequence: UInt64), size: Int) {
        position.storeBytes(of: stamp.timestamp.littleEndian, toByteOffset: 0, as: UInt64.self)
        position.storeBytes(of: stamp.sequence.littleEndian, toByteOffset: 8, as: UInt64.self)
        (position + 16).initializeMemory(as: UInt8.self, repeating: BenchPayload.padding, count: size - BenchPayload.minimumSize)
        position += size
    }
}
