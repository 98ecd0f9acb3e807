import Glibc
public import LonglinkCore

/// The push of one record, written by hand: the same bytes protobuf-c packs for
/// `ServerFrame { push: Push { … } }` (fields in number order, proto3 zero values left out, oneof members always
/// written), computed in one sizing pass and one writing pass straight into the array's uninitialised storage.
///
/// Why by hand: the push is encoded once per record on the fan-out path, and protobuf-c needs the Swift values
/// turned into C structs and NUL-terminated strings first, then walks its descriptors twice (size, pack), about
/// 5,000 instructions per push; this is about a fifth of it. The route is written from the record's parts, so
/// no route text is built either. `PushEncoderTests` checks the bytes against the codec's for many records.
enum PushEncoder {
    /// The length-prefixed `ServerFrame` carrying `record`'s push (`Push(route: record.route, record: record)`);
    /// `.unencodable` where the codec would refuse it too (a string holding a NUL byte, a record of a kind that
    /// carries none).
    static func frame(of record: OrderChangeRecord, skippedBefore: Bool = false) throws(FrameError) -> [UInt8] {
        guard record.kind.scheme == "order" || record.kind.scheme == "config" else {
            throw .unencodable("push route \(record.route) carries no records")
        }
        let parts = Parts(record, skippedBefore: skippedBefore)
        try parts.checkStrings()
        let pushSize = parts.pushSize
        let frameBody = 1 + varintSize(UInt64(pushSize)) + pushSize
        let total = varintSize(UInt64(frameBody)) + frameBody
        return FrameBytes.array(capacity: total) { out, initialized in
            var writer = Writer(out.baseAddress!)
            writer.varint(UInt64(frameBody))
            writer.byte(0x0A)  // ServerFrame.push = 1, length-delimited
            writer.varint(UInt64(pushSize))
            parts.write(&writer)
            precondition(writer.count == total, "push encoder wrote \(writer.count) bytes, sized \(total)")
            initialized = total
        }
    }

    /// Bytes of `value` as a base-128 varint.
    @inline(__always)
    static func varintSize(_ value: UInt64) -> Int {
        (64 - (value | 1).leadingZeroBitCount + 6) / 7
    }

    /// A length-delimited field's size (tag, length, bytes), for a field number below 16.
    @inline(__always)
    static func delimitedSize(_ count: Int) -> Int { 1 + varintSize(UInt64(count)) + count }

    /// A varint field's size, for a field number below 16.
    @inline(__always)
    static func varintFieldSize(_ value: UInt64) -> Int { 1 + varintSize(value) }

    /// protobuf-c packs an enum as an `int32`: a negative value takes ten bytes.
    @inline(__always)
    static func enumValue(_ code: UInt32) -> UInt64 { UInt64(bitPattern: Int64(Int32(bitPattern: code))) }

    @inline(__always)
    static func zigzag(_ value: Int32) -> UInt64 { UInt64(UInt32(bitPattern: (value << 1) ^ (value >> 31))) }

    /// A state as it travels: its catalog number, or its name.
    enum State {
        case code(UInt32)
        case name(String)

        init(_ state: OrderState) {
            if let code = StateCatalog.code(of: state) { self = .code(code) } else { self = .name(state.name) }
        }

        func size() -> Int {
            switch self {
            case .code(let code): varintFieldSize(enumValue(code))
            case .name(let name): delimitedSize(name.utf8.count)
            }
        }

        func write(_ writer: inout Writer, codeTag: UInt8, nameTag: UInt8) {
            switch self {
            case .code(let code):
                writer.byte(codeTag)
                writer.varint(enumValue(code))
            case .name(let name):
                writer.delimited(nameTag, name)
            }
        }
    }

    /// The record's values, read out of it once.
    struct Parts {
        let scheme: String
        let line: String
        let id: String
        let offset: UInt64
        let epoch: UInt32
        let timestamp: UInt64
        let to: State
        let from: State?
        let fields: OrderFields
        let hasFields: Bool
        let fieldsSize: Int
        let skippedBefore: Bool

        init(_ record: OrderChangeRecord, skippedBefore: Bool) {
            scheme = record.kind.scheme
            line = record.line.name
            id = record.orderID.rawValue
            let position = record.position
            offset = position.offset
            epoch = position.epoch
            timestamp = record.timestampMillis
            to = State(record.toState)
            from = record.fromState.map(State.init)
            fields = record.fields
            hasFields = !fields.isEmpty
            fieldsSize = hasFields ? Self.size(of: fields) : 0
            routeSize = scheme.utf8.count + 3 + line.utf8.count + 1 + id.utf8.count
            self.skippedBefore = skippedBefore
        }

        let routeSize: Int

        var pushSize: Int {
            var size = delimitedSize(routeSize)
            if offset != 0 { size += varintFieldSize(offset) }
            if epoch != 0 { size += varintFieldSize(UInt64(epoch)) }
            if timestamp != 0 { size += varintFieldSize(timestamp) }
            size += to.size()
            if let from { size += from.size() }
            if hasFields { size += delimitedSize(fieldsSize) }
            if skippedBefore { size += 2 }
            return size
        }

        /// The codec passes strings to protobuf-c as C strings, so it refuses one holding a NUL byte; so does
        /// this encoder (route parts are validated identifiers and cannot hold one).
        func checkStrings() throws(FrameError) {
            var clean = true
            if case .name(let name) = to { clean = clean && Self.isClean(name) }
            if case .name(let name)? = from { clean = clean && Self.isClean(name) }
            if hasFields {
                clean = clean && Self.isClean(fields.driverID) && Self.isClean(fields.cancellationReason)
                if case .string(let text)? = fields.toggle { clean = clean && Self.isClean(text) }
            }
            if !clean { throw .unencodable("a string field contains a NUL byte") }
        }

        private static func isClean(_ string: String?) -> Bool {
            guard let string else { return true }
            return !string.utf8.contains(0)
        }

        static func size(of fields: OrderFields) -> Int {
            var size = 0
            if let driverID = fields.driverID { size += delimitedSize(driverID.utf8.count) }
            if let eta = fields.etaSeconds { size += varintFieldSize(UInt64(eta)) }
            if let location = fields.location {
                size += varintFieldSize(zigzag(location.latitudeE6)) + varintFieldSize(zigzag(location.longitudeE6))
            }
            if let reason = fields.cancellationReason { size += delimitedSize(reason.utf8.count) }
            let payload = fields.payload.count
            if payload > 0 { size += delimitedSize(payload) }
            switch fields.toggle {
            case .bool?: size += 2
            case .rollout(let percent)?: size += varintFieldSize(UInt64(UInt32(clamping: percent)))
            case .string(let text)?: size += delimitedSize(text.utf8.count)
            case nil: break
            }
            return size
        }

        func write(_ writer: inout Writer) {
            // Push.route = 1
            writer.byte(0x0A)
            writer.varint(UInt64(routeSize))
            writer.bytes(scheme)
            writer.byte(UInt8(ascii: ":"))
            writer.byte(UInt8(ascii: "/"))
            writer.byte(UInt8(ascii: "/"))
            writer.bytes(line)
            writer.byte(UInt8(ascii: "/"))
            writer.bytes(id)
            if offset != 0 {
                writer.byte(0x10)
                writer.varint(offset)
            }
            if epoch != 0 {
                writer.byte(0x18)
                writer.varint(UInt64(epoch))
            }
            if timestamp != 0 {
                writer.byte(0x20)
                writer.varint(timestamp)
            }
            to.write(&writer, codeTag: 0x28, nameTag: 0x32)
            from?.write(&writer, codeTag: 0x38, nameTag: 0x42)
            if hasFields {
                writer.byte(0x4A)
                writer.varint(UInt64(fieldsSize))
                writeFields(&writer)
            }
            if skippedBefore {
                writer.byte(0x50)
                writer.byte(1)
            }
        }

        private func writeFields(_ writer: inout Writer) {
            if let driverID = fields.driverID { writer.delimited(0x0A, driverID) }
            if let eta = fields.etaSeconds {
                writer.byte(0x10)
                writer.varint(UInt64(eta))
            }
            if let location = fields.location {
                writer.byte(0x18)
                writer.varint(zigzag(location.latitudeE6))
                writer.byte(0x20)
                writer.varint(zigzag(location.longitudeE6))
            }
            if let reason = fields.cancellationReason { writer.delimited(0x2A, reason) }
            let payload = fields.payload
            if !payload.isEmpty {
                writer.byte(0x32)
                writer.varint(UInt64(payload.count))
                payload.withUnsafeBufferPointer { writer.bytes($0) }
            }
            switch fields.toggle {
            case .bool(let on)?:
                writer.byte(0x38)
                writer.byte(on ? 1 : 0)
            case .rollout(let percent)?:
                writer.byte(0x40)
                writer.varint(UInt64(UInt32(clamping: percent)))
            case .string(let text)?:
                writer.delimited(0x4A, text)
            case nil:
                break
            }
        }
    }

    /// Writes into storage sized beforehand (no bounds checks: the sizing pass guarantees the room).
    struct Writer {
        private let base: UnsafeMutablePointer<UInt8>
        private(set) var count = 0

        init(_ base: UnsafeMutablePointer<UInt8>) { self.base = base }

        @inline(__always)
        mutating func byte(_ value: UInt8) {
            base[count] = value
            count += 1
        }

        @inline(__always)
        mutating func varint(_ value: UInt64) {
            var rest = value
            while rest >= 0x80 {
                base[count] = UInt8(truncatingIfNeeded: rest) | 0x80
                count += 1
                rest >>= 7
            }
            base[count] = UInt8(truncatingIfNeeded: rest)
            count += 1
        }

        mutating func bytes(_ source: UnsafeBufferPointer<UInt8>) {
            guard let start = source.baseAddress, source.count > 0 else { return }
            (base + count).initialize(from: start, count: source.count)
            count += source.count
        }

        mutating func bytes(_ string: String) {
            var string = string
            string.withUTF8 { bytes($0) }
        }

        mutating func delimited(_ tag: UInt8, _ string: String) {
            byte(tag)
            varint(UInt64(string.utf8.count))
            bytes(string)
        }
    }
}

extension ProtobufFrameCodec {
    /// The push of `record` on its own route, by the hand-written `PushEncoder` (the same bytes as
    /// `encodedFrame(.push(Push(route: record.route, record: record)))`).
    public func encodedPush(of record: OrderChangeRecord) throws(FrameError) -> [UInt8] {
        try PushEncoder.frame(of: record)
    }
}
