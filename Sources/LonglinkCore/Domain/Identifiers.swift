/// The identifier of one order, unique within its business line (e.g. `8812`).
///
/// Valid ids are 1–64 characters of `[A-Za-z0-9_.-]`, so they can stand in a route URL unescaped.
public struct OrderID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The id as text.
    public let rawValue: String

    /// Creates an id, or returns nil when `rawValue` is not a valid order id.
    public init?(_ rawValue: String) {
        guard Identifier.isValid(rawValue, maxLength: 64) else { return nil }
        self.rawValue = rawValue
    }

    /// An id already known to be valid (a part of a `Route`, which validated it).
    init(validated rawValue: String) { self.rawValue = rawValue }

    public var description: String { rawValue }
    public static func < (lhs: OrderID, rhs: OrderID) -> Bool { lhs.rawValue < rhs.rawValue }
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

    /// Built-in lines.
    public static let taxi = BusinessLine("taxi")!
    public static let express = BusinessLine("express")!
    public static let premium = BusinessLine("premium")!
    public static let carpool = BusinessLine("carpool")!
}

/// One state of an order's lifecycle (`dispatching`, `in_trip`, ...). Which states exist and how they connect
/// is defined per business line by its `StateMachine`.
public struct OrderState: Hashable, Sendable, Comparable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The state's name.
    public let name: String

    /// Creates a state name. Validity against a line is the state machine's business, not this type's.
    public init(_ name: String) { self.name = name }
    public init(stringLiteral value: String) { self.name = value }

    public var description: String { name }
    public static func < (lhs: OrderState, rhs: OrderState) -> Bool { lhs.name < rhs.name }
}

/// Character rules shared by the identifier types.
enum Identifier {
    static func isValid(_ text: String, maxLength: Int, lowercaseOnly: Bool = false) -> Bool {
        let utf8 = text.utf8
        guard !utf8.isEmpty, utf8.count <= maxLength else { return false }
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "_"), UInt8(ascii: "-"):
                continue
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "."):
                if lowercaseOnly { return false }
            default:
                return false
            }
        }
        return true
    }
}
