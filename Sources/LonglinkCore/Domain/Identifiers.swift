/// The identifier of one order, unique within its business line (e.g. `8812`).
///
/// Valid ids are 1–64 characters of `[A-Za-z0-9_.-]`, so they can stand in a route URL unescaped.
/// The id carries a 64-bit hash of its text, computed once while the text is validated: dictionaries keyed by
/// order ids (the stores' tables) hash 8 bytes instead of the text and compare texts only when the hashes match.
public struct OrderID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The id as text.
    public let rawValue: String
    /// `IdentifierHash` of the text (seeded per process; never persisted or sent).
    let textHash: UInt64

    /// Creates an id, or returns nil when `rawValue` is not a valid order id.
    public init?(_ rawValue: String) {
        guard let hash = Identifier.validatedHash(rawValue, maxLength: 64) else { return nil }
        self.rawValue = rawValue
        self.textHash = hash
    }

    /// An id already known to be valid (a part of a `Route`, which validated it).
    init(validated rawValue: String) {
        self.rawValue = rawValue
        self.textHash = IdentifierHash.hash(rawValue)
    }

    public var description: String { rawValue }
    public static func < (lhs: OrderID, rhs: OrderID) -> Bool { lhs.rawValue < rhs.rawValue }
    public static func == (lhs: OrderID, rhs: OrderID) -> Bool {
        lhs.textHash == rhs.textHash && lhs.rawValue == rhs.rawValue
    }
    public func hash(into hasher: inout Hasher) { hasher.combine(textHash) }
}

/// A business line (taxi, express, premium, carpool, ...): its name selects the state machine orders follow.
///
/// Valid names are 1–32 characters of lower-case letters, digits, `_` and `-`.
public struct BusinessLine: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The line's name as it appears in routes (`order://taxi/…`).
    public let name: String

    /// Creates a line name, or returns nil when it is not valid.
    public init?(_ name: String) {
        guard Identifier.isValid(name, maxLength: 32, lowercaseOnly: true) else { return nil }
        self.name = name
    }

    /// A name already known to be valid (a part of a `Route`, which validated it).
    init(validated name: String) { self.name = name }

    public var description: String { name }
    public static func < (lhs: BusinessLine, rhs: BusinessLine) -> Bool { lhs.name < rhs.name }
    /// Lengths first: two different small strings otherwise compare through the runtime's slow path.
    public static func == (lhs: BusinessLine, rhs: BusinessLine) -> Bool {
        lhs.name.utf8.count == rhs.name.utf8.count && lhs.name == rhs.name
    }
    public func hash(into hasher: inout Hasher) { hasher.combine(name) }

    /// Built-in lines.
    public static let taxi = BusinessLine("taxi")!
    public static let express = BusinessLine("express")!
    public static let premium = BusinessLine("premium")!
    public static let carpool = BusinessLine("carpool")!
}

/// One state of an order's lifecycle (`dispatching`, `in_trip`, ...). Which states exist and how they connect
/// is defined per business line by its `StateMachine`.
///
/// Like `OrderID`, a state carries a hash of its name computed once, so the per-change state lookups compare
/// words instead of strings.
public struct OrderState: Hashable, Sendable, Comparable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The state's name.
    public let name: String
    /// `IdentifierHash` of the name (seeded per process; never persisted or sent).
    let nameHash: UInt64

    /// Creates a state name. Validity against a line is the state machine's business, not this type's.
    public init(_ name: String) {
        self.name = name
        self.nameHash = IdentifierHash.hash(name)
    }
    public init(stringLiteral value: String) { self.init(value) }

    public var description: String { name }
    public static func < (lhs: OrderState, rhs: OrderState) -> Bool { lhs.name < rhs.name }
    public static func == (lhs: OrderState, rhs: OrderState) -> Bool {
        lhs.nameHash == rhs.nameHash && lhs.name == rhs.name
    }
    public func hash(into hasher: inout Hasher) { hasher.combine(nameHash) }
}

/// Character rules shared by the identifier types.
enum Identifier {
    static func isValid(_ text: String, maxLength: Int, lowercaseOnly: Bool = false) -> Bool {
        let utf8 = text.utf8
        guard !utf8.isEmpty, utf8.count <= maxLength else { return false }
        for byte in utf8 where !isAllowed(byte, lowercaseOnly: lowercaseOnly) { return false }
        return true
    }

    /// The text's `IdentifierHash` when it is a valid identifier (any case), else nil: one pass over the bytes.
    static func validatedHash(_ text: String, maxLength: Int) -> UInt64? {
        var text = text
        return text.withUTF8 { bytes -> UInt64? in
            guard !bytes.isEmpty, bytes.count <= maxLength else { return nil }
            for byte in bytes where !isAllowed(byte, lowercaseOnly: false) { return nil }
            return IdentifierHash.hash(bytes)
        }
    }

    @inline(__always)
    private static func isAllowed(_ byte: UInt8, lowercaseOnly: Bool) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "_"), UInt8(ascii: "-"):
            return true
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "."):
            return !lowercaseOnly
        default:
            return false
        }
    }
}

/// A fast 64-bit hash of short identifier texts, seeded randomly per process (so values differ between runs and
/// are never stored or sent). Eight bytes per multiply-xorshift round; used to pre-hash order ids, whose texts
/// come from authenticated publishers.
enum IdentifierHash {
    private static let seed = UInt64.random(in: 0...UInt64.max)

    /// The hash of `text`'s UTF-8 bytes.
    static func hash(_ text: String) -> UInt64 {
        var text = text
        return text.withUTF8 { hash($0) }
    }

    static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var state = seed ^ (UInt64(bytes.count) &* 0x9E37_79B9_7F4A_7C15)
        var index = 0
        let count = bytes.count
        while index + 8 <= count {
            state = mix(state ^ UInt64(littleEndianBytes: bytes, at: index, count: 8))
            index += 8
        }
        if index < count {
            state = mix(state ^ UInt64(littleEndianBytes: bytes, at: index, count: count - index))
        }
        return finalize(state)
    }

    @inline(__always)
    private static func mix(_ value: UInt64) -> UInt64 {
        let multiplied = value &* 0xBF58_476D_1CE4_E5B9
        return multiplied ^ (multiplied >> 31)
    }

    @inline(__always)
    private static func finalize(_ value: UInt64) -> UInt64 {
        var value = value ^ (value >> 33)
        value = value &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 29)
    }
}

extension UInt64 {
    /// The `count` (1–8) bytes at `index`, little-endian.
    @inline(__always)
    fileprivate init(littleEndianBytes bytes: UnsafeBufferPointer<UInt8>, at index: Int, count: Int) {
        if count == 8 {
            self = UInt64(littleEndian: UnsafeRawPointer(bytes.baseAddress! + index).loadUnaligned(as: UInt64.self))
            return
        }
        var value: UInt64 = 0
        for offset in 0..<count { value |= UInt64(bytes[index + offset]) << (UInt64(offset) * 8) }
        self = value
    }
}
