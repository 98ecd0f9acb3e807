/// Protobuf wire reads for the load generator's in-place scanners (`PushView`, `PublishResultView`): a raw
/// pointer that moves forward, each read checked against `end`, nil (or false) on truncated or malformed input;
/// the caller then hands the frame to the full decoder, which reports the error. Nothing is allocated.
enum WireBytes {
    /// The varint at `cursor`; nil when truncated or longer than 10 bytes.
    @inline(__always)
    static func varint(_ cursor: inout UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>) -> UInt64? {
        guard cursor < end else { return nil }
        let first = cursor.pointee
        cursor += 1
        if first < 0x80 { return UInt64(first) }
        var value = UInt64(first & 0x7F)
        var shift: UInt64 = 7
        while cursor < end && shift < 64 {
            let byte = cursor.pointee
            cursor += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
        return nil
    }

    /// The bytes of the length-delimited value at `cursor` (after its key); nil when truncated.
    @inline(__always)
    static func lengthDelimited(_ cursor: inout UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>) -> UnsafeRawBufferPointer? {
        guard let length = varint(&cursor, end), length <= UInt64(end - cursor) else { return nil }
        let bytes = UnsafeRawBufferPointer(start: cursor, count: Int(length))
        cursor += Int(length)
        return bytes
    }

    /// Skips the value of a field of `wireType` at `cursor` (after its key); false when truncated or unknown.
    @inline(__always)
    static func skip(_ cursor: inout UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>, wireType: UInt8) -> Bool {
        switch wireType {
        case 0: return varint(&cursor, end) != nil
        case 2: return lengthDelimited(&cursor, end) != nil
        case 1, 5:
            let size = wireType == 1 ? 8 : 4
            guard end - cursor >= size else { return false }
            cursor += size
            return true
        default: return false
        }
    }
}
