/// Text renderings of raw fields: `protoc --decode_raw`'s layout, and a one-line form for frame lines.
extension RawWire {
    /// Renders fields exactly as `protoc --decode_raw` does: one field per line, nested messages in braces,
    /// varints unsigned, fixed values in hex, other length-delimited values as C-escaped strings.
    public static func text(_ fields: [RawField], indent: Int = 0) -> String {
        var out = ""
        appendText(fields, indent: indent, depth: 0, to: &out)
        return out
    }

    private static func appendText(_ fields: [RawField], indent: Int, depth: Int, to out: inout String) {
        let pad = String(repeating: "  ", count: indent)
        for field in fields {
            switch field.value {
            case .group(let inner):
                out += "\(pad)\(field.number) {\n"
                appendText(inner, indent: indent + 1, depth: depth + 1, to: &out)
                out += "\(pad)}\n"
            case .lengthDelimited(let bytes):
                if depth < maxDepth, !bytes.isEmpty, let inner = try? parse(bytes) {
                    out += "\(pad)\(field.number) {\n"
                    appendText(inner, indent: indent + 1, depth: depth + 1, to: &out)
                    out += "\(pad)}\n"
                } else {
                    out += "\(pad)\(field.number): \"\(cEscape(bytes))\"\n"
                }
            default:
                out += "\(pad)\(field.number): \(scalar(field.value))\n"
            }
        }
    }

    /// One line: `1:150 2:"text" 3:{1:2} 4:0x00000001`. Length-delimited values are shown as a nested message
    /// when they parse as one and are not printable text, as text when printable, else as hex bytes.
    public static func compact(_ fields: [RawField]) -> String {
        fields.map(compact(_:)).joined(separator: " ")
    }

    /// One field on one line (see `compact(_:)` for fields).
    public static func compact(_ field: RawField) -> String {
        "\(field.number):" + compactValue(field.value, depth: 0)
    }

    private static func compactValue(_ value: RawValue, depth: Int) -> String {
        switch value {
        case .group(let inner):
            return "{" + inner.map { "\($0.number):" + compactValue($0.value, depth: depth + 1) }.joined(separator: " ") + "}"
        case .lengthDelimited(let bytes):
            if isPrintableText(bytes) { return "\"\(escapeText(String(decoding: bytes, as: UTF8.self)))\"" }
            if depth < 8, !bytes.isEmpty, let inner = try? parse(bytes) {
                return "{" + inner.map { "\($0.number):" + compactValue($0.value, depth: depth + 1) }
                    .joined(separator: " ") + "}"
            }
            return "0x" + hex(bytes)
        default:
            return scalar(value)
        }
    }

    /// A scalar value in `protoc --decode_raw` notation.
    static func scalar(_ value: RawValue) -> String {
        switch value {
        case .varint(let v): String(v)
        case .fixed64(let v): "0x" + paddedHex(v, digits: 16)
        case .fixed32(let v): "0x" + paddedHex(UInt64(v), digits: 8)
        case .lengthDelimited(let bytes): "\"\(cEscape(bytes))\""
        case .group: "{…}"
        }
    }

    /// The wire type's protobuf name.
    public static func wireTypeName(_ wireType: Int) -> String {
        switch wireType {
        case 0: "varint"
        case 1: "fixed64"
        case 2: "length-delimited"
        case 3: "group"
        case 5: "fixed32"
        default: "wire type \(wireType)"
        }
    }

    /// protobuf's `CEscape`: printable ASCII as is, `\n \r \t \" \' \\` escaped, every other byte as three octal
    /// digits (so UTF-8 text shows as octal, as in protoc's output).
    public static func cEscape(_ bytes: [UInt8]) -> String {
        var out = ""
        for byte in bytes {
            switch byte {
            case 0x0A: out += "\\n"
            case 0x0D: out += "\\r"
            case 0x09: out += "\\t"
            case 0x22: out += "\\\""
            case 0x27: out += "\\'"
            case 0x5C: out += "\\\\"
            case 0x20..<0x7F: out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let octal = String(byte, radix: 8)
                out += "\\" + String(repeating: "0", count: 3 - octal.count) + octal
            }
        }
        return out
    }

    /// Escapes `"`, `\` and control characters of text, keeping other Unicode as is (for readable lines).
    public static func escapeText(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    out += "\\x" + paddedHex(UInt64(scalar.value), digits: 2)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }

    /// Whether bytes are valid UTF-8 text without control characters (tab, newline excepted).
    public static func isPrintableText(_ bytes: [UInt8]) -> Bool {
        guard let text = String(validating: bytes, as: UTF8.self) else { return false }
        return text.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value != 0x7F || $0 == "\n" || $0 == "\t" }
    }

    /// Lower-case hex, two digits per byte.
    public static func hex(_ bytes: some Sequence<UInt8>) -> String {
        var out = ""
        for byte in bytes { out += paddedHex(UInt64(byte), digits: 2) }
        return out
    }

    static func paddedHex(_ value: UInt64, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
