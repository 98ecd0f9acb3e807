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

    /// Creates an id from its UTF-8 bytes, or returns nil when they are not a valid order id: one pass checks the
    /// bytes, one hashes them, and the text is made once (what a decoder calls on the bytes of a frame).
    public init?(utf8 bytes: UnsafeBufferPointer<UInt8>) {
        guard Identifier.isValid(bytes, maxLength: 64, lowercaseOnly: false) else { return nil }
        self.rawValue = Identifier.text(bytes)
        self.textHash = IdentifierHash.hash(bytes)
    }

    /// An id already known to be valid (a part of a `Route`, which validated it).
    init(validated rawValue: String) {
        self.rawValue = rawValue
        self.textHash = IdentifierHash.hash(rawValue)
    }

    /// An id already known to be valid, with its `textHash` computed when it was checked.
    init(validated rawValue: String, textHash: UInt64) {
        self.rawValue = rawValue
        self.textHash = textHash
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
///
/// Like `OrderID`, a line carries a hash of its name computed once: the fan-out's route digests
/// (`RouteKey.filterDigest`) take it per record instead of hashing the name.
public struct BusinessLine: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The line's name as it appears in routes (`order://taxi/…`).
    public let name: String
    /// `IdentifierHash` of the name (seeded per process; never persisted or sent).
    let nameHash: UInt64

    /// Creates a line name, or returns nil when it is not valid.
    public init?(_ name: String) {
        guard Identifier.isValid(name, maxLength: 32, lowercaseOnly: true) else { return nil }
        self.init(validated: name)
    }

    /// Creates a line name from its UTF-8 bytes, or returns nil when they are not a valid name: one pass checks the
    /// bytes and the text is made once (the built-in lines' names are not made at all: their values are shared).
    public init?(utf8 bytes: UnsafeBufferPointer<UInt8>) {
        guard Identifier.isValid(bytes, maxLength: 32, lowercaseOnly: true) else { return nil }
        self = Self.builtIn(bytes) ?? BusinessLine(name: Identifier.text(bytes), nameHash: IdentifierHash.hash(bytes))
    }

    /// A name already known to be valid (a part of a `Route`, which validated it).
    init(validated name: String) { self.init(name: name, nameHash: IdentifierHash.hash(name)) }

    private init(name: String, nameHash: UInt64) {
        self.name = name
        self.nameHash = nameHash
    }

    /// The built-in line spelled `bytes`, if any: one word compared instead of a string made (the words are the
    /// names' bytes, little-endian: `IdentifierTests` checks them).
    private static func builtIn(_ bytes: UnsafeBufferPointer<UInt8>) -> BusinessLine? {
        switch (bytes.count, Identifier.word(bytes)) {
        case (4, Identifier.taxiWord): .taxi
        case (7, Identifier.expressWord): .express
        case (7, Identifier.premiumWord): .premium
        case (7, Identifier.carpoolWord): .carpool
        default: nil
        }
    }

    public var description: String { name }
    public static func < (lhs: BusinessLine, rhs: BusinessLine) -> Bool { lhs.name < rhs.name }
    /// Hashes first: two different small strings otherwise compare through the runtime's slow path.
    public static func == (lhs: BusinessLine, rhs: BusinessLine) -> Bool {
        lhs.nameHash == rhs.nameHash && lhs.name == rhs.name
    }
    public func hash(into hasher: inout Hasher) { hasher.combine(nameHash) }

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
    /// `IdentifierHash` of the name (seeded per process; never persisted or sent), for tables keyed by state.
    public let nameHash: UInt64

    /// Creates a state name. Validity against a line is the state machine's business, not this type's.
    public init(_ name: String) {
        self.name = name
        self.nameHash = IdentifierHash.hash(name)
    }
    public init(stringLiteral value: String) { self.init(value) }

    /// A state whose `nameHash` is already known (the copy of a catalog's state).
    init(name: String, nameHash: UInt64) {
        self.name = name
        self.nameHash = nameHash
    }

    public var description: String { name }
    public static func < (lhs: OrderState, rhs: OrderState) -> Bool { lhs.name < rhs.name }
    /// Inlinable: the codec compares a pushed record's states with its catalog's on every push.
    @inlinable
    public static func == (lhs: OrderState, rhs: OrderState) -> Bool {
        lhs.nameHash == rhs.nameHash && lhs.name == rhs.name
    }
    public func hash(into hasher: inout Hasher) { hasher.combine(nameHash) }
}

/// Character rules shared by the identifier types.
///
/// The allowed bytes are bit sets over 0–127 (`[A-Za-z0-9_.-]`, or `[a-z0-9_-]` for lower-case-only names), so a
/// byte is checked with a shift and a mask instead of a chain of range compares.
enum Identifier {
    /// Bit `b` of word `b >> 6` is set when byte `b` may appear in an identifier of any case: `[A-Za-z0-9_.-]`.
    static let anyCase: (low: UInt64, high: UInt64) = (0x03ff_6000_0000_0000, 0x07ff_fffe_87ff_fffe)
    /// The same for lower-case-only names: `[a-z0-9_-]`. (`IdentifierTests` checks both against the characters.)
    static let lowerCase: (low: UInt64, high: UInt64) = (0x03ff_2000_0000_0000, 0x07ff_fffe_8000_0000)

    static func isValid(_ text: String, maxLength: Int, lowercaseOnly: Bool = false) -> Bool {
        var text = text
        return text.withUTF8 { isValid($0, maxLength: maxLength, lowercaseOnly: lowercaseOnly) }
    }

    /// Whether `bytes` are 1–`maxLength` allowed bytes: one pass, a shift and a mask per byte. (The early exit
    /// keeps the loop scalar: vectorised for identifiers of 4–20 bytes, it cost twice as much.)
    @inline(__always)
    static func isValid(_ bytes: UnsafeBufferPointer<UInt8>, maxLength: Int, lowercaseOnly: Bool) -> Bool {
        guard !bytes.isEmpty, bytes.count <= maxLength else { return false }
        let set = lowercaseOnly ? lowerCase : anyCase
        for byte in bytes {
            // A byte of 0x80 or above is refused by its top bit; below, by its bit in the set.
            let word = byte & 0x40 == 0 ? set.low : set.high
            guard byte < 0x80, (word >> UInt64(byte & 63)) & 1 != 0 else { return false }
        }
        return true
    }

    /// The text's `IdentifierHash` when it is a valid identifier (any case), else nil: one pass over the bytes.
    static func validatedHash(_ text: String, maxLength: Int) -> UInt64? {
        var text = text
        return text.withUTF8 { bytes -> UInt64? in
            guard isValid(bytes, maxLength: maxLength, lowercaseOnly: false) else { return nil }
            return IdentifierHash.hash(bytes)
        }
    }

    /// `bytes` (checked: ASCII) as a string, copied in as they are (`String(decoding:as:)` would check them again
    /// and take its repairing path). Up to 15 bytes the standard library stores them inline.
    @inline(__always)
    static func text(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        String(unsafeUninitializedCapacity: bytes.count) { target in
            target.baseAddress!.initialize(from: bytes.baseAddress!, count: bytes.count)
            return bytes.count
        }
    }

    /// The first 8 bytes of `bytes` (at most), little-endian: a name of up to 8 bytes as one word.
    /// From 4 bytes on, two overlapping 4-byte loads.
    @inline(__always)
    static func word(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        let count = min(bytes.count, 8)
        guard count >= 4, let base = bytes.baseAddress else {
            return UInt64(littleEndianBytes: bytes, at: 0, count: count)
        }
        let raw = UnsafeRawPointer(base)
        let low = UInt64(UInt32(littleEndian: raw.loadUnaligned(as: UInt32.self)))
        let high = UInt64(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: count &- 4, as: UInt32.self)))
        return low | high << UInt64(8 &* (count &- 4))
    }

    /// `word` of the built-in lines' names.
    static let taxiWord: UInt64 = 0x6978_6174
    static let expressWord: UInt64 = 0x73_7365_7270_7865
    static let premiumWord: UInt64 = 0x6d_7569_6d65_7270
    static let carpoolWord: UInt64 = 0x6c_6f6f_7072_6163
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

    /// The bytes in words of 8, little-endian; the last part word is the last 8 bytes shifted down when there are
    /// that many (one load instead of a byte loop).
    static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        let count = bytes.count
        var state = seed ^ (UInt64(count) &* 0x9E37_79B9_7F4A_7C15)
        guard let base = bytes.baseAddress, count > 0 else { return finalize(state) }
        let raw = UnsafeRawPointer(base)
        var index = 0
        while index &+ 8 <= count {
            state = mix(state ^ UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)))
            index &+= 8
        }
        let rest = count &- index
        if rest > 0 {
            var tail: UInt64 = 0
            if count >= 8 {
                let last = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: count &- 8, as: UInt64.self))
                tail = last >> UInt64(8 &* (8 &- rest))
            } else {
                for offset in 0..<rest { tail |= UInt64(base[offset]) << UInt64(offset &* 8) }
            }
            state = mix(state ^ tail)
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
