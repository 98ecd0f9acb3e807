/// A forward cursor over protobuf wire bytes for the load generator's in-place scanners (`PushView`,
/// `PublishResultView`): varints, length-delimited fields and skipping, on raw pointers, allocating nothing.
/// Every read checks the end and answers nil (or false) on truncated or malformed input; the caller then hands the
/// frame to the full decoder, which reports the error.
struct WireCursor {
    private var position: UnsafePointer<UInt8>?
    private let end: UnsafePointer<UInt8>?

    /// A cursor over `bytes`.
    init(_ bytes: UnsafeRawBufferPointer) {
        let start = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
        position = start
        end = start.map { $0 + bytes.count }
    }

    /// Whether every byte was read.
    var isAtEnd: Bool { position == end }

    /// The next varint; nil when truncated or longer than 10 bytes.
    @inline(__always)
    mutating func varint() -> UInt64? {
        guard var cursor = position, let end, cursor < end else { return nil }
        let first = cursor.pointee
        if first < 0x80 {
            position = cursor + 1
            return UInt64(first)
        }
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while cursor < end && shift < 64 {
            let byte = cursor.pointee
            cursor += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 {
                position = cursor
                return value
            }
            shift += 7
        }
        return nil
    }

    /// The bytes of the next length-delimited field (after its key); nil when truncated.
    @inline(__always)
    mutating func lengthDelimited() -> UnsafeRawBufferPointer? {
        guard let length = varint(), let start = position, let end, length <= UInt64(end - start) else { return nil }
        position = start + Int(length)
        return UnsafeRawBufferPointer(start: start, count: Int(length))
    }

    /// Skips the value of a field of `wireType` (after its key); false when truncated or of an unknown type.
    @inline(__always)
    mutating func skip(wireType: UInt64) -> Bool {
        switch wireType {
        case 0: return varint() != nil
        case 1: return advance(8)
        case 2: return lengthDelimited() != nil
        case 5: return advance(4)
        default: return false
        }
    }

    private mutating func advance(_ count: Int) -> Bool {
        guard let start = position, let end, end - start >= count else { return false }
        position = start + count
        return true
    }
}
