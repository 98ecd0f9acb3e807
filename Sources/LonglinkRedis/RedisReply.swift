internal import CLonglinkHiredis

/// One reply from Redis (RESP2, what hiredis 0.14 speaks), as a Swift value: no hiredis type leaves this module.
public enum RedisReply: Hashable, Sendable, CustomStringConvertible {
    /// A simple string (`+OK`).
    case status(String)
    /// An error reply (`-ERR ...`); commands that fail report it as `RedisError.server` instead.
    case error(String)
    /// An integer (`:3`).
    case integer(Int64)
    /// A bulk string (binary-safe bytes).
    case bulk([UInt8])
    /// The null bulk string or null array.
    case null
    /// An array of replies.
    case array([RedisReply])

    /// The text of a status or bulk reply (bulk bytes decoded as UTF-8), nil otherwise.
    public var string: String? {
        switch self {
        case .status(let text): text
        case .bulk(let bytes): String(decoding: bytes, as: UTF8.self)
        default: nil
        }
    }

    /// The value of an integer reply, nil otherwise.
    public var integer: Int64? {
        if case .integer(let value) = self { value } else { nil }
    }

    /// The elements of an array reply, nil otherwise.
    public var array: [RedisReply]? {
        if case .array(let elements) = self { elements } else { nil }
    }

    public var description: String {
        switch self {
        case .status(let text): "+\(text)"
        case .error(let text): "-\(text)"
        case .integer(let value): ":\(value)"
        case .bulk(let bytes): "\"\(String(decoding: bytes, as: UTF8.self))\""
        case .null: "(nil)"
        case .array(let elements): "[" + elements.map(\.description).joined(separator: ", ") + "]"
        }
    }

    /// Copies a hiredis reply object (which the caller still owns and frees).
    init(_ reply: UnsafePointer<redisReply>) {
        let raw = reply.pointee
        switch raw.type {
        case REDIS_REPLY_STATUS:
            self = .status(Self.text(raw.str, raw.len))
        case REDIS_REPLY_ERROR:
            self = .error(Self.text(raw.str, raw.len))
        case REDIS_REPLY_INTEGER:
            self = .integer(Int64(raw.integer))
        case REDIS_REPLY_STRING:
            self = .bulk(raw.str.map { Array(UnsafeRawBufferPointer(start: $0, count: raw.len)) } ?? [])
        case REDIS_REPLY_ARRAY:
            var elements: [RedisReply] = []
            elements.reserveCapacity(raw.elements)
            for index in 0..<raw.elements {
                if let element = raw.element[index] { elements.append(RedisReply(element)) } else { elements.append(.null) }
            }
            self = .array(elements)
        default:
            self = .null
        }
    }

    private static func text(_ pointer: UnsafeMutablePointer<CChar>?, _ length: Int) -> String {
        guard let pointer else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: pointer, count: length), as: UTF8.self)
    }
}
