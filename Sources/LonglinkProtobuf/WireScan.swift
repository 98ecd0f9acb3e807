import LonglinkCore

/// Tells a truncated body from a malformed one after protobuf-c refused it (protobuf-c only says "NULL").
///
/// Walks the top-level fields: a field that runs past the end of the body means the body was cut
/// (`.truncated`); anything else is `.malformed`. Runs only on the error path.
enum WireScan {
    static func diagnose(_ body: UnsafeRawBufferPointer, message: String) -> FrameError {
        var index = 0
        while index < body.count {
            let tag: UInt64
            switch readVarint(body, &index) {
            case .value(let v): tag = v
            case .cut: return .truncated
            case .overlong: return .malformed("overlong varint tag in \(message)")
            }
            guard tag >> 3 != 0 else { return .malformed("field number 0 in \(message)") }
            switch tag & 7 {
            case 0:
                switch readVarint(body, &index) {
                case .value: break
                case .cut: return .truncated
                case .overlong: return .malformed("overlong varint in field \(tag >> 3) of \(message)")
                }
            case 1:
                index += 8
            case 2:
                switch readVarint(body, &index) {
                case .value(let length):
                    guard length <= UInt64(body.count - index) else { return .truncated }
                    index += Int(length)
                case .cut: return .truncated
                case .overlong: return .malformed("overlong length in field \(tag >> 3) of \(message)")
                }
            case 5:
                index += 4
            default:
                return .malformed("wire type \(tag & 7) of field \(tag >> 3) in \(message)")
            }
            if index > body.count { return .truncated }
        }
        return .malformed("not a valid \(message) (a field has the wrong type, length or content)")
    }

    private enum Varint {
        case value(UInt64)
        case cut
        case overlong
    }

    private static func readVarint(_ body: UnsafeRawBufferPointer, _ index: inout Int) -> Varint {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while index < body.count {
            let byte = body[index]
            // The tenth byte holds bit 63 only: more is a varint above 2^64 − 1 or longer than ten bytes.
            guard shift < 63 || byte <= 1 else { return .overlong }
            index += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return .value(value) }
            shift += 7
        }
        return .cut
    }
}
