/// How `inspect decode` input is written: raw bytes, hex text or base64 text.
public enum InputEncoding: String, Hashable, Sendable {
    /// The bytes themselves.
    case binary
    /// Hex digits; whitespace, `:` and `0x` prefixes are ignored (so `xxd -p` and `tcpdump -X` style pastes work).
    case hex
    /// Standard or URL-safe base64; whitespace ignored, padding optional.
    case base64

    /// A problem in text input, with the character position.
    public struct DecodingError: Error, Hashable, Sendable, CustomStringConvertible {
        /// Offset of the bad character in the text (in bytes).
        public var position: Int
        /// What is wrong.
        public var reason: String

        public var description: String { "input character \(position): \(reason)" }
    }

    /// Turns the input into the frame bytes.
    public func decode(_ input: [UInt8]) throws(DecodingError) -> [UInt8] {
        switch self {
        case .binary: input
        case .hex: try Self.hex(input)
        case .base64: try Self.base64(input)
        }
    }

    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }

    static func hex(_ input: [UInt8]) throws(DecodingError) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(input.count / 2)
        var high: UInt8?
        var highPosition = 0
        var index = 0
        while index < input.count {
            let byte = input[index]
            if isSpace(byte) || byte == UInt8(ascii: ":") {
                index += 1
                continue
            }
            if byte == UInt8(ascii: "0"), high == nil, index + 1 < input.count,
                input[index + 1] | 0x20 == UInt8(ascii: "x")
            {
                index += 2
                continue
            }
            let nibble: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = byte - UInt8(ascii: "A") + 10
            default:
                throw DecodingError(position: index, reason: "'\(printable(byte))' is not a hex digit")
            }
            if let first = high {
                out.append(first << 4 | nibble)
                high = nil
            } else {
                high = nibble
                highPosition = index
            }
            index += 1
        }
        if high != nil {
            throw DecodingError(position: highPosition, reason: "odd number of hex digits (a byte is two digits)")
        }
        return out
    }

    static func base64(_ input: [UInt8]) throws(DecodingError) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(input.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        var padding = false
        for (index, byte) in input.enumerated() {
            if isSpace(byte) { continue }
            if byte == UInt8(ascii: "=") {
                padding = true
                continue
            }
            let value: UInt8
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = byte - UInt8(ascii: "A")
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = byte - UInt8(ascii: "a") + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = byte - UInt8(ascii: "0") + 52
            case UInt8(ascii: "+"), UInt8(ascii: "-"): value = 62
            case UInt8(ascii: "/"), UInt8(ascii: "_"): value = 63
            default:
                throw DecodingError(position: index, reason: "'\(printable(byte))' is not a base64 character")
            }
            guard !padding else { throw DecodingError(position: index, reason: "base64 data after '=' padding") }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        if bits >= 6 {
            throw DecodingError(position: input.count, reason: "base64 ends with a single character of a group")
        }
        return out
    }

    private static func printable(_ byte: UInt8) -> String {
        (0x21..<0x7F).contains(byte) ? String(UnicodeScalar(byte)) : "\\x" + RawWire.paddedHex(UInt64(byte), digits: 2)
    }
}
