/// Protobuf wire reads for the load generator's in-place scanners (`PushView`, `PublishResultView`): a raw
/// pointer that moves forward, each read checked against `end`, nil (or false) on truncated or malformed input;
/// the caller then hands the frame to the full decoder, which reports the error. Nothing is allocated, and the
/// arithmetic is unchecked where the bounds checks already rule out overflow (this runs per field of every push).
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
            value |= UInt64(byte & 0x7F) &<< shift
            if byte < 0x80 { return value }
            shift &+= 7
        }
        return nil
    }

    /// Steps over the varint at `cursor` without decoding it; false when it is truncated.
    @inline(__always)
    static func skipVarint(_ cursor: inout UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>) -> Bool {
        var position = cursor
        while position < end {
            let byte = position.pointee
            position += 1
            if byte < 0x80 {
                cursor = position
                return true
            }
        }
        return false
    }

    /// The bytes of the length-delimited value at `cursor` (after its key); nil when truncated.
    @inline(__always)
    static func lengthDelimited(_ cursor: inout UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>) -> UnsafeRawBufferPointer? {
        guard let length = varint(&cursor, end) else { return nil }
        let available = end - cursor  // ≥ 0: the cursor never passes `end`
        guard length <= UInt64(truncatingIfNeeded: available) else { return nil }
        let count = Int(truncatingIfNeeded: length)
        let bytes = UnsafeRawBufferPointer(start: cursor, count: count)
        cursor += count
        return bytes
    }

    /// Skips the value of a field of `wireType` at `cursor` (after its key); false when truncated or unknown.
    @inline(__always)
    static func skip(_ cursor: inout UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>, wireType: UInt8) -> Bool {
        switch wireType {
        case 0: return skipVarint(&cursor, end)
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
