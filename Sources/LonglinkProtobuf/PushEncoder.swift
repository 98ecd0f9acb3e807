import Glibc
public import LonglinkCore

/// The push of one record, written by hand: the same bytes protobuf-c packs for
/// `ServerFrame { push: Push { … } }` (fields in number order, proto3 zero values left out, oneof members always
/// written), sized in one pass over the record's values (`PushFrame`) and written in one pass straight into the
/// storage of an array: a new one of exactly that size, or a ring's frame reused in place (`write(_:into:)`).
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
        try PushFrame(record, skippedBefore: skippedBefore).array(of: record)
    }

    /// Writes the push of `record` into `frame`: in `frame`'s storage when it has the room (the count is trimmed or
    /// extended to the push's length, then the bytes are written over it; storage another copy holds is copied
    /// first, which is one allocation, as a new array would be), else into a new array with 32 bytes to spare, so the
    /// next push of about the same length fits. Throws before changing `frame`.
    ///
    /// The count moves a byte at a time: pushes of one ring differ by a few bytes (an order id, a varint), and a
    /// single-element `append`/`removeLast` is specialised code in every build, where `removeLast(_:)` and
    /// `append(contentsOf:)` go through generic paths that allocate in a debug build. A frame more than
    /// `slackToTrim` bytes longer than the push is replaced instead.
    static func write(_ record: OrderChangeRecord, into frame: inout [UInt8]) throws(FrameError) {
        let push = try PushFrame(record, skippedBefore: false)
        let total = push.total
        let count = frame.count
        guard count > 0, total <= frame.capacity, count - total <= slackToTrim else {
            frame = push.array(of: record, spare: 32)
            return
        }
        while frame.count > total { frame.removeLast() }
        while frame.count < total { frame.append(0) }
        frame.withUnsafeMutableBufferPointer { push.write(record, to: $0.baseAddress!) }
    }

    /// The most bytes `write(_:into:)` trims off a frame to reuse it.
    static let slackToTrim = 64

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

    /// The size of a state's field: its catalog number as a varint (`code`), or its name.
    @inline(__always)
    static func stateSize(_ state: OrderState, code: UInt32?) -> Int {
        if let code { return varintFieldSize(enumValue(code)) }
        return delimitedSize(state.name.utf8.count)
    }

    /// Whether `string` holds a NUL byte (the codec hands strings to protobuf-c as C strings, so it refuses one).
    @inline(__always)
    static func holdsNUL(_ string: String) -> Bool {
        let utf8 = string.utf8
        let found = utf8.withContiguousStorageIfAvailable { bytes -> Bool in
            guard let start = bytes.baseAddress, bytes.count > 0 else { return false }
            return memchr(start, 0, bytes.count) != nil
        }
        return found ?? utf8.contains(0)
    }

    /// The sizes of one push, computed once from the record (one read of each value); the bytes are written by
    /// `write(_:to:)`, given the same record, into storage of at least `total` bytes. (The record is not kept: a
    /// copy of it would be a retain, a release and an outlined copy and destroy per push.)
    struct PushFrame {
        let skippedBefore: Bool
        let toCode: UInt32?
        let fromCode: UInt32?
        let routeSize: Int
        let fieldsSize: Int
        let pushSize: Int
        let frameBody: Int
        let total: Int

        init(_ record: OrderChangeRecord, skippedBefore: Bool) throws(FrameError) {
            let kind = record.kind
            guard kind == .order || kind == .config else {
                throw .unencodable("push route \(record.route) carries no records")
            }
            self.skippedBefore = skippedBefore
            let to = record.toState
            let from = record.fromState
            toCode = StateCatalog.code(of: to)
            fromCode = from.flatMap { StateCatalog.code(of: $0) }
            // Route parts are validated identifiers and cannot hold a NUL; state names and field texts can.
            var nul = toCode == nil && holdsNUL(to.name)
            if let from, fromCode == nil { nul = nul || holdsNUL(from.name) }
            routeSize = kind.utf8Count + 3 + record.line.name.utf8.count + 1 + record.orderID.rawValue.utf8.count
            var size = delimitedSize(routeSize)
            let position = record.position
            if position.offset != 0 { size += varintFieldSize(position.offset) }
            if position.epoch != 0 { size += varintFieldSize(UInt64(position.epoch)) }
            let timestamp = record.timestampMillis
            if timestamp != 0 { size += varintFieldSize(timestamp) }
            size += stateSize(to, code: toCode)
            if let from { size += stateSize(from, code: fromCode) }
            let fields = record.fields
            if fields.isEmpty {
                fieldsSize = 0
            } else {
                var fieldsSize = 0
                if let driverID = fields.driverID {
                    fieldsSize += delimitedSize(driverID.utf8.count)
                    nul = nul || holdsNUL(driverID)
                }
                if let eta = fields.etaSeconds { fieldsSize += varintFieldSize(UInt64(eta)) }
                if let location = fields.location {
                    fieldsSize += varintFieldSize(zigzag(location.latitudeE6))
                        + varintFieldSize(zigzag(location.longitudeE6))
                }
                if let reason = fields.cancellationReason {
                    fieldsSize += delimitedSize(reason.utf8.count)
                    nul = nul || holdsNUL(reason)
                }
                let payload = fields.payload.count
                if payload > 0 { fieldsSize += delimitedSize(payload) }
                switch fields.toggle {
                case .bool?: fieldsSize += 2
                case .rollout(let percent)?: fieldsSize += varintFieldSize(UInt64(UInt32(clamping: percent)))
                case .string(let text)?:
                    fieldsSize += delimitedSize(text.utf8.count)
                    nul = nul || holdsNUL(text)
                case nil: break
                }
                self.fieldsSize = fieldsSize
                size += delimitedSize(fieldsSize)
            }
            if nul { throw .unencodable("a string field contains a NUL byte") }
            if skippedBefore { size += 2 }
            pushSize = size
            frameBody = 1 + varintSize(UInt64(size)) + size
            total = varintSize(UInt64(frameBody)) + frameBody
        }

        /// A new array holding the frame of `record` (the record these sizes were computed from), with room for
        /// `spare` bytes more.
        func array(of record: OrderChangeRecord, spare: Int = 0) -> [UInt8] {
            [UInt8](unsafeUninitializedCapacity: total + spare) { storage, initialized in
                write(record, to: storage.baseAddress!)
                initialized = total
            }
        }

        /// Writes the frame of `record` (the record these sizes were computed from), `total` bytes, at `base`.
        func write(_ record: OrderChangeRecord, to base: UnsafeMutablePointer<UInt8>) {
            var writer = Writer(base)
            writer.varint(UInt64(frameBody))
            writer.byte(0x0A)  // ServerFrame.push = 1, length-delimited
            writer.varint(UInt64(pushSize))
            // Push.route = 1
            writer.byte(0x0A)
            writer.varint(UInt64(routeSize))
            record.kind.withUTF8 { writer.bytes($0) }
            writer.byte(UInt8(ascii: ":"))
            writer.byte(UInt8(ascii: "/"))
            writer.byte(UInt8(ascii: "/"))
            writer.utf8(record.line.name)
            writer.byte(UInt8(ascii: "/"))
            writer.utf8(record.orderID.rawValue)
            let position = record.position
            if position.offset != 0 {
                writer.byte(0x10)
                writer.varint(position.offset)
            }
            if position.epoch != 0 {
                writer.byte(0x18)
                writer.varint(UInt64(position.epoch))
            }
            let timestamp = record.timestampMillis
            if timestamp != 0 {
                writer.byte(0x20)
                writer.varint(timestamp)
            }
            writer.state(record.toState, code: toCode, codeTag: 0x28, nameTag: 0x32)
            if let from = record.fromState { writer.state(from, code: fromCode, codeTag: 0x38, nameTag: 0x42) }
            let fields = record.fields
            if !fields.isEmpty {
                writer.byte(0x4A)
                writer.varint(UInt64(fieldsSize))
                writeFields(fields, &writer)
            }
            if skippedBefore {
                writer.byte(0x50)
                writer.byte(1)
            }
            precondition(writer.count == total, "push encoder wrote \(writer.count) bytes, sized \(total)")
        }

        private func writeFields(_ fields: OrderFields, _ writer: inout Writer) {
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

        @inline(__always)
        mutating func bytes(_ source: UnsafeBufferPointer<UInt8>) {
            guard let start = source.baseAddress, source.count > 0 else { return }
            (base + count).initialize(from: start, count: source.count)
            count += source.count
        }

        /// The string's UTF-8, read in place (a native or small string is contiguous; no copy of the string).
        @inline(__always)
        mutating func utf8(_ string: String) {
            let written: Int? = string.utf8.withContiguousStorageIfAvailable { [base, count] source in
                guard let start = source.baseAddress, source.count > 0 else { return 0 }
                (base + count).initialize(from: start, count: source.count)
                return source.count
            }
            if let written {
                count += written
            } else {
                for byte in string.utf8 { self.byte(byte) }
            }
        }

        @inline(__always)
        mutating func delimited(_ tag: UInt8, _ string: String) {
            byte(tag)
            varint(UInt64(string.utf8.count))
            utf8(string)
        }

        @inline(__always)
        mutating func state(_ state: OrderState, code: UInt32?, codeTag: UInt8, nameTag: UInt8) {
            if let code {
                byte(codeTag)
                varint(enumValue(code))
            } else {
                delimited(nameTag, state.name)
            }
        }
    }
}

extension ProtobufFrameCodec {
    /// The push of `record` on its own route, by the hand-written `PushEncoder` (the same bytes as
    /// `encodedFrame(.push(Push(route: record.route, record: record)))`).
    public func encodedPush(of record: OrderChangeRecord) throws(FrameError) -> [UInt8] {
        try PushEncoder.frame(of: record)
    }

    /// `encodedPush(of:)` written into `frame`'s storage when it is free and large enough (`PushEncoder.write`).
    public func encodePush(of record: OrderChangeRecord, into frame: inout [UInt8]) throws(FrameError) {
        try PushEncoder.write(record, into: &frame)
    }
}
