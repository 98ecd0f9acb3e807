/// A field the schema does not declare (or declares with another wire type), found inside a frame.
public struct UnknownField: Hashable, Sendable, CustomStringConvertible {
    /// Where it was found: the dotted path of declared field names from the frame down (`push.fields`);
    /// empty at the top level of the frame.
    public var path: String
    /// The field as read from the wire.
    public var field: RawField

    /// Creates one.
    public init(path: String, field: RawField) {
        self.path = path
        self.field = field
    }

    /// `push.fields.20:5 (varint)`.
    public var description: String {
        (path.isEmpty ? "" : path + ".") + RawWire.compact(field) + " (\(RawWire.wireTypeName(field.value.wireType)))"
    }
}

/// Walking raw fields with the schema: every field by name (`protoc --decode` layout) and the unknown ones.
extension FrameSchema {
    /// The declared field for `raw` in `message`, when its number is declared with the same wire type.
    func declared(_ raw: RawField, in message: String) -> Field? {
        guard let field = messages[message]?[raw.number], field.type.wireType == raw.value.wireType else { return nil }
        return field
    }

    /// Every field of `fields` (a `message`) that the schema does not know, recursively.
    public func unknownFields(in fields: [RawField], message: String, path: String = "") -> [UnknownField] {
        var unknown: [UnknownField] = []
        for raw in fields {
            guard let field = declared(raw, in: message) else {
                unknown.append(UnknownField(path: path, field: raw))
                continue
            }
            if case .message(let nested) = field.type, case .lengthDelimited(let bytes) = raw.value,
                let inner = try? RawWire.parse(bytes)
            {
                let nestedPath = path.isEmpty ? field.name : path + "." + field.name
                unknown += unknownFields(in: inner, message: nested, path: nestedPath)
            }
        }
        return unknown
    }

    /// Every field by name, one per line as `protoc --decode` prints them (in wire order); unknown fields raw as
    /// `protoc` prints them (`20: 5`). Text keeps its Unicode; credentials show their length only.
    public func text(_ fields: [RawField], message: String, indent: Int = 0) -> String {
        var out = ""
        let pad = String(repeating: "  ", count: indent)
        for raw in fields {
            guard let field = declared(raw, in: message) else {
                out += RawWire.text([raw], indent: indent)
                continue
            }
            switch (field.type, raw.value) {
            case (.message(let nested), .lengthDelimited(let bytes)):
                if let inner = try? RawWire.parse(bytes) {
                    out += "\(pad)\(field.name) {\n" + text(inner, message: nested, indent: indent + 1) + "\(pad)}\n"
                } else {
                    out += "\(pad)\(field.name): \"\(RawWire.cEscape(bytes))\"  # not a valid \(nested)\n"
                }
            case (.string, .lengthDelimited(let bytes)) where Self.secretFields.contains("\(message).\(field.name)"):
                out += "\(pad)\(field.name): <redacted, \(bytes.count) bytes>\n"
            default:
                out += "\(pad)\(field.name): \(Self.value(field.type, raw.value))\n"
            }
        }
        return out
    }

    /// A scalar field's value in text format.
    static func value(_ type: FieldType, _ value: RawValue) -> String {
        switch (type, value) {
        case (.uint32, .varint(let v)): String(UInt32(truncatingIfNeeded: v))
        case (.uint64, .varint(let v)): String(v)
        case (.sint32, .varint(let v)): String(zigzag32(v))
        case (.bool, .varint(let v)): v != 0 ? "true" : "false"
        case (.state, .varint(let v)): stateNames[v] ?? String(v)
        case (.string, .lengthDelimited(let bytes)):
            if let text = String(validating: bytes, as: UTF8.self) {
                "\"\(RawWire.escapeText(text))\""
            } else {
                "\"\(RawWire.cEscape(bytes))\"  # not UTF-8"
            }
        case (.bytes, .lengthDelimited(let bytes)): "\"\(RawWire.cEscape(bytes))\""
        default: RawWire.scalar(value)
        }
    }

    /// Decodes a zigzag-encoded sint32.
    static func zigzag32(_ v: UInt64) -> Int32 {
        let n = UInt32(truncatingIfNeeded: v)
        return Int32(bitPattern: (n >> 1) ^ (0 &- (n & 1)))
    }
}
