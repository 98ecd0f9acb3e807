/// One value of a protobuf field read without its schema: what the wire type alone says.
public enum RawValue: Hashable, Sendable {
    /// Wire type 0: a base-128 varint (ints, bools, enums, zigzag sints), shown unsigned.
    case varint(UInt64)
    /// Wire type 1: eight little-endian bytes.
    case fixed64(UInt64)
    /// Wire type 2: a length-delimited byte string (string, bytes, nested message, packed repeated).
    case lengthDelimited([UInt8])
    /// Wire types 3/4: a (deprecated) group and the fields inside it.
    case group([RawField])
    /// Wire type 5: four little-endian bytes.
    case fixed32(UInt32)

    /// The protobuf wire type number.
    public var wireType: Int {
        switch self {
        case .varint: 0
        case .fixed64: 1
        case .lengthDelimited: 2
        case .group: 3
        case .fixed32: 5
        }
    }
}

/// One field of a message read without its schema: its number and value, like a line of `protoc --decode_raw`.
public struct RawField: Hashable, Sendable {
    /// The field number (1 … 2^29 − 1).
    public var number: Int
    /// The value.
    public var value: RawValue

    /// Creates a field.
    public init(number: Int, value: RawValue) {
        self.number = number
        self.value = value
    }
}

/// Why bytes are not a protobuf message, with the byte offset (from the start of the parsed bytes).
public struct RawWireError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Offset of the offending byte, from the start of the bytes given to the parser.
    public var offset: Int
    /// What is wrong.
    public var reason: String

    /// Creates an error.
    public init(offset: Int, reason: String) {
        self.offset = offset
        self.reason = reason
    }

    public var description: String { "byte \(offset): \(reason)" }
}

/// The protobuf wire format without a schema, like `protoc --decode_raw`: parses any bytes into numbered fields,
/// and says where and why when they are not a message.
public enum RawWire {
    /// The deepest nesting of groups followed (protoc's default recursion limit).
    static let maxDepth = 100

    /// Parses all of `bytes` as one message.
    public static func parse(_ bytes: [UInt8]) throws(RawWireError) -> [RawField] {
        var reader = Reader(bytes: bytes, index: 0, end: bytes.count)
        return try reader.fields(endGroup: nil, depth: 0)
    }

    /// Parses as many whole fields as possible: the fields read before the first problem, and the problem
    /// (nil when all of `bytes` is a message). For showing what a malformed frame still contains.
    public static func parsePrefix(_ bytes: [UInt8]) -> (fields: [RawField], error: RawWireError?) {
        var reader = Reader(bytes: bytes, index: 0, end: bytes.count)
        var fields: [RawField] = []
        while reader.index < reader.end {
            do throws(RawWireError) {
                guard let field = try reader.field(endGroup: nil, depth: 0) else {
                    return (fields, RawWireError(offset: reader.index, reason: "end-group tag outside a group"))
                }
                fields.append(field)
            } catch {
                return (fields, error)
            }
        }
        return (fields, nil)
    }

    /// Whether `bytes` parse completely as a message with at least one field (protoc's test for showing a
    /// length-delimited value as a nested message rather than a string).
    public static func looksLikeMessage(_ bytes: [UInt8], depth: Int = 0) -> Bool {
        guard !bytes.isEmpty, depth < maxDepth else { return false }
        return (try? parse(bytes)) != nil
    }

    /// Reads a varint at `index` of `bytes`; nil when the bytes end first, `.failure` past 10 bytes.
    static func varint(_ bytes: [UInt8], at index: inout Int, end: Int) -> Result<UInt64, RawWireError>? {
        let start = index
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while index < end {
            let byte = bytes[index]
            if shift == 63 && byte > 1 {
                return .failure(RawWireError(offset: start, reason: "varint longer than 10 bytes or above 2^64"))
            }
            value |= UInt64(byte & 0x7F) << shift
            index += 1
            if byte & 0x80 == 0 { return .success(value) }
            shift += 7
        }
        return nil
    }

    /// A cursor over a range of bytes.
    struct Reader {
        let bytes: [UInt8]
        var index: Int
        let end: Int

        mutating func fields(endGroup: Int?, depth: Int) throws(RawWireError) -> [RawField] {
            var fields: [RawField] = []
            while index < end {
                guard let field = try field(endGroup: endGroup, depth: depth) else { return fields }
                fields.append(field)
            }
            if let endGroup { throw RawWireError(offset: index, reason: "group \(endGroup) is not closed") }
            return fields
        }

        /// Reads one field; nil at the end-group tag that closes `endGroup`.
        mutating func field(endGroup: Int?, depth: Int) throws(RawWireError) -> RawField? {
            let tagOffset = index
            let tag = try readVarint(what: "field tag")
            let number = tag >> 3
            let wireType = Int(tag & 7)
            guard number != 0 else { throw RawWireError(offset: tagOffset, reason: "field number 0") }
            guard number < 1 << 29 else {
                throw RawWireError(offset: tagOffset, reason: "field number \(number) above 2^29 - 1")
            }
            let field = Int(number)
            switch wireType {
            case 0:
                return RawField(number: field, value: .varint(try readVarint(what: "varint of field \(field)")))
            case 1:
                return RawField(number: field, value: .fixed64(try fixed(8, field)))
            case 2:
                let lengthOffset = index
                let length = try readVarint(what: "length of field \(field)")
                guard length <= UInt64(end - index) else {
                    throw RawWireError(
                        offset: lengthOffset,
                        reason: "field \(field) announces \(length) bytes, only \(end - index) remain"
                    )
                }
                let value = Array(bytes[index..<(index + Int(length))])
                index += Int(length)
                return RawField(number: field, value: .lengthDelimited(value))
            case 3:
                guard depth < RawWire.maxDepth else {
                    throw RawWireError(offset: tagOffset, reason: "groups nested too deeply")
                }
                return RawField(number: field, value: .group(try fields(endGroup: field, depth: depth + 1)))
            case 4:
                guard endGroup == field else {
                    throw RawWireError(offset: tagOffset, reason: "end-group tag of field \(field) outside its group")
                }
                return nil
            case 5:
                return RawField(number: field, value: .fixed32(UInt32(truncatingIfNeeded: try fixed(4, field))))
            default:
                throw RawWireError(offset: tagOffset, reason: "invalid wire type \(wireType) (field \(field))")
            }
        }

        private mutating func readVarint(what: String) throws(RawWireError) -> UInt64 {
            let start = index
            switch RawWire.varint(bytes, at: &index, end: end) {
            case .success(let value)?: return value
            case .failure(let error)?: throw RawWireError(offset: error.offset, reason: "\(what): \(error.reason)")
            case nil: throw RawWireError(offset: start, reason: "\(what) cut off at the end of the bytes")
            }
        }

        private mutating func fixed(_ size: Int, _ field: Int) throws(RawWireError) -> UInt64 {
            guard end - index >= size else {
                throw RawWireError(
                    offset: index,
                    reason: "fixed\(size * 8) field \(field) needs \(size) bytes, only \(end - index) remain"
                )
            }
            var value: UInt64 = 0
            for offset in 0..<size { value |= UInt64(bytes[index + offset]) << UInt64(8 * offset) }
            index += size
            return value
        }
    }
}
