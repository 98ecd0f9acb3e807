internal import CLonglinkProto

/// The varint rule protobuf-c leaves out: a varint is at most ten bytes and at most 2^64 − 1 (its tenth byte
/// holds bit 63 only), and a field key fits 32 bits. protobuf-c refuses a longer varint, but it drops the bits of
/// a ten-byte one above 2^64 and of a key above 2^32 without a word, so such a frame would be accepted as
/// another value.
///
/// `hold` walks a body protobuf-c has just unpacked (so its framing is sound) and checks every varint: keys,
/// values, lengths, and the elements of packed repeated fields, descending into nested messages with the
/// generated descriptors (a length-delimited field is a nested message only when the schema says so). It reads
/// the bytes once and allocates nothing.
enum VarintBounds {
    /// Nested messages deeper than this are refused (the frames nest four levels).
    static let maxDepth = 16

    /// The reason a refused frame gets (`FrameError.malformed`).
    static func violation(_ message: String) -> String {
        "a varint above 2^64 - 1 (or a field key above 2^32 - 1) in \(message)"
    }

    /// Whether every varint of `body`, a message of `descriptor`'s type, is in bounds.
    static func hold(in body: UnsafeRawBufferPointer, _ descriptor: UnsafePointer<ProtobufCMessageDescriptor>) -> Bool {
        hold(in: body, from: 0, to: body.count, descriptor, depth: 0)
    }

    private static func hold(
        in bytes: UnsafeRawBufferPointer,
        from start: Int,
        to end: Int,
        _ descriptor: UnsafePointer<ProtobufCMessageDescriptor>,
        depth: Int
    ) -> Bool {
        guard depth <= maxDepth else { return false }
        var index = start
        while index < end {
            guard let key = varint(bytes, &index, end: end), key <= UInt64(UInt32.max) else { return false }
            switch key & 7 {
            case 0:
                guard varint(bytes, &index, end: end) != nil else { return false }
            case 1:
                index += 8
            case 5:
                index += 4
            case 2:
                guard let length = varint(bytes, &index, end: end), length <= UInt64(end - index) else { return false }
                let fieldEnd = index + Int(length)
                if let field = protobuf_c_message_descriptor_get_field(descriptor, UInt32(key >> 3)) {
                    if field.pointee.type == PROTOBUF_C_TYPE_MESSAGE, let nested = field.pointee.descriptor {
                        let nestedDescriptor = nested.assumingMemoryBound(to: ProtobufCMessageDescriptor.self)
                        guard hold(in: bytes, from: index, to: fieldEnd, nestedDescriptor, depth: depth + 1) else {
                            return false
                        }
                    } else if field.pointee.label == PROTOBUF_C_LABEL_REPEATED && isVarint(field.pointee.type) {
                        var element = index
                        while element < fieldEnd {
                            guard varint(bytes, &element, end: fieldEnd) != nil else { return false }
                        }
                    }
                }
                index = fieldEnd
            default:
                return false  // groups (wire types 3 and 4): protobuf-c has refused them already
            }
        }
        return index == end
    }

    /// Scalar types encoded as varints (packed when repeated).
    private static func isVarint(_ type: ProtobufCType) -> Bool {
        switch type {
        case PROTOBUF_C_TYPE_INT32, PROTOBUF_C_TYPE_SINT32, PROTOBUF_C_TYPE_UINT32, PROTOBUF_C_TYPE_INT64,
            PROTOBUF_C_TYPE_SINT64, PROTOBUF_C_TYPE_UINT64, PROTOBUF_C_TYPE_BOOL, PROTOBUF_C_TYPE_ENUM:
            true
        default:
            false
        }
    }

    /// Reads one varint; nil when it is cut, longer than ten bytes or above 2^64 − 1.
    private static func varint(_ bytes: UnsafeRawBufferPointer, _ index: inout Int, end: Int) -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while index < end {
            let byte = bytes[index]
            index += 1
            if shift == 63 && byte > 1 { return nil }
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
        return nil
    }
}
