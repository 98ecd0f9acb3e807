/// A JSON document as a value, with a serializer and a parser and no Foundation: what the admin API reads and
/// writes and the inspector prints. Objects keep their key order, so output reads the way it was built.
public enum JSONValue: Sendable, Hashable {
    /// `null`.
    case null
    /// `true` / `false`.
    case bool(Bool)
    /// An integer (serialized without a fraction).
    case int(Int64)
    /// An unsigned integer beyond `Int64` (raw protobuf varints); serialized as digits.
    case uint(UInt64)
    /// A number with a fraction or exponent.
    case double(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object, keys in order.
    case object([(String, JSONValue)])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.int(let a), .int(let b)): a == b
        case (.double(let a), .double(let b)): a == b
        case (.int(let a), .double(let b)), (.double(let b), .int(let a)): Double(a) == b
        case (.uint(let a), .uint(let b)): a == b
        case (.uint(let a), .int(let b)), (.int(let b), .uint(let a)): b >= 0 && UInt64(b) == a
        case (.uint(let a), .double(let b)), (.double(let b), .uint(let a)): Double(a) == b
        case (.string(let a), .string(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)): a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(serialized) }

    /// The member `key` of an object, nil otherwise.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.0 == key }?.1
    }

    /// The string, or nil.
    public var stringValue: String? { if case .string(let s) = self { s } else { nil } }
    /// The integer (a double with no fraction counts), or nil.
    public var intValue: Int64? {
        switch self {
        case .int(let v): v
        case .uint(let v) where v <= UInt64(Int64.max): Int64(v)
        case .double(let d) where d.rounded() == d && abs(d) < 9e15: Int64(d)
        default: nil
        }
    }
    /// The number as a double, or nil.
    public var doubleValue: Double? {
        switch self {
        case .int(let v): Double(v)
        case .uint(let v): Double(v)
        case .double(let d): d
        default: nil
        }
    }
    /// The boolean, or nil.
    public var boolValue: Bool? { if case .bool(let b) = self { b } else { nil } }
    /// The elements of an array, or nil.
    public var arrayValue: [JSONValue]? { if case .array(let a) = self { a } else { nil } }

    /// Compact JSON text.
    public var serialized: String {
        var out = ""
        write(into: &out)
        return out
    }

    /// Compact JSON text; with `htmlSafe: false`, strings escape only what JSON requires (see `quote`), as
    /// Foundation's `JSONSerialization` writes them: what bytes that others parse or sign (JWT) should carry.
    public func serialized(htmlSafe: Bool) -> String {
        var out = ""
        write(into: &out, htmlSafe: htmlSafe)
        return out
    }

    /// Appends compact JSON text to `out` (strings escaped as `quote(_:into:htmlSafe:)` does).
    public func write(into out: inout String, htmlSafe: Bool = true) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let v): out += String(v)
        case .uint(let v): out += String(v)
        case .double(let d):
            if d.isFinite {
                out += d.rounded() == d && abs(d) < 1e15 ? String(Int64(d)) : "\(d)"
            } else {
                out += "null"
            }
        case .string(let s): Self.quote(s, into: &out, htmlSafe: htmlSafe)
        case .array(let elements):
            out += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { out += "," }
                element.write(into: &out, htmlSafe: htmlSafe)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (index, (key, value)) in members.enumerated() {
                if index > 0 { out += "," }
                Self.quote(key, into: &out, htmlSafe: htmlSafe)
                out += ":"
                value.write(into: &out, htmlSafe: htmlSafe)
            }
            out += "}"
        }
    }

    /// `text` as a JSON string literal (see `quote(_:into:htmlSafe:)`).
    public static func quoted(_ text: String, htmlSafe: Bool = true) -> String {
        var out = ""
        quote(text, into: &out, htmlSafe: htmlSafe)
        return out
    }

    /// Appends `text` as a JSON string literal. With `htmlSafe` (the default), `<`, `>`, `&`, U+2028 and U+2029 are
    /// escaped too, so the output is safe to inline in an HTML page; log lines and terminal output keep them as is.
    public static func quote(_ text: String, into out: inout String, htmlSafe: Bool = true) {
        out += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "<" where htmlSafe, ">" where htmlSafe, "&" where htmlSafe, "\u{2028}" where htmlSafe,
                "\u{2029}" where htmlSafe:
                out += unicodeEscape(scalar.value)
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                out += unicodeEscape(scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }

    private static func unicodeEscape(_ value: UInt32) -> String {
        let digits = Array("0123456789abcdef")
        var text = "\\u"
        for shift in stride(from: 12, through: 0, by: -4) { text.append(digits[Int((value >> UInt32(shift)) & 0xF)]) }
        return text
    }

    /// Parses JSON text (at most `maxDepth` nested arrays/objects).
    public static func parse(_ text: String, maxDepth: Int = 32) throws(JSONError) -> JSONValue {
        try parse(Array(text.utf8), maxDepth: maxDepth)
    }

    /// Parses UTF-8 JSON bytes (at most `maxDepth` nested arrays/objects).
    public static func parse(_ bytes: [UInt8], maxDepth: Int = 32) throws(JSONError) -> JSONValue {
        var parser = JSONParser(bytes: bytes, maxDepth: maxDepth)
        let value = try parser.value(depth: 0)
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw JSONError(offset: parser.index, reason: "trailing characters") }
        return value
    }
}

/// Why JSON text could not be parsed.
public struct JSONError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The byte offset of the problem.
    public let offset: Int
    /// What was wrong.
    public let reason: String

    public var description: String { "invalid JSON at byte \(offset): \(reason)" }
}
