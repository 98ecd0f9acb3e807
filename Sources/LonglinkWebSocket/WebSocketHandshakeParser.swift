/// The head of an HTTP/1.1 request, as far as a WebSocket upgrade needs it: request line and header fields.
public struct WebSocketUpgradeRequest: Sendable, Hashable {
    /// One header field; `name` is lower-cased, `value` trimmed of optional whitespace.
    public struct Field: Sendable, Hashable {
        public var name: String
        public var value: String
    }

    /// The method (`GET`).
    public var method: String
    /// The request target: path and query (`/longlink?x=1`).
    public var target: String
    /// The protocol version (`HTTP/1.1`).
    public var version: String
    /// Every header field, in order.
    public var fields: [Field]

    /// The values of every field called `name` (lower-case).
    public func values(_ name: String) -> [String] {
        fields.filter { $0.name == name }.map(\.value)
    }

    /// The comma-separated tokens of every field called `name`, trimmed and lower-cased (`Connection`,
    /// `Upgrade`; `Sec-WebSocket-Protocol` keeps its case with `lowercased: false`).
    public func tokens(_ name: String, lowercased: Bool = true) -> [String] {
        var tokens: [String] = []
        for field in fields where field.name == name {
            var value = field.value
            value.withUTF8 { utf8 in
                let bytes = UnsafeRawBufferPointer(utf8)
                var start = 0
                while start <= bytes.count {
                    var end = start
                    while end < bytes.count && bytes[end] != UInt8(ascii: ",") { end += 1 }
                    var first = start
                    var last = end
                    while first < last && (bytes[first] == UInt8(ascii: " ") || bytes[first] == UInt8(ascii: "\t")) { first += 1 }
                    while last > first && (bytes[last - 1] == UInt8(ascii: " ") || bytes[last - 1] == UInt8(ascii: "\t")) { last -= 1 }
                    if last > first {
                        tokens.append(WebSocketHandshakeParser.asciiString(UnsafeRawBufferPointer(rebasing: bytes[first..<last]), lowercased: lowercased))
                    }
                    start = end + 1
                }
            }
        }
        return tokens
    }

    /// The path part of the target (before `?`).
    public var path: Substring { target.utf8.firstIndex(of: UInt8(ascii: "?")).map { target[..<$0] } ?? target[...] }
}

/// Reads an HTTP/1.1 request head from the bytes received so far (sans-IO: no socket, no state between calls).
public enum WebSocketHandshakeParser {
    /// What the bytes so far hold.
    public enum Result: Sendable, Hashable {
        /// The head is not complete yet (and within the size limit).
        case incomplete
        /// A complete head of `headLength` bytes (the blank line included); bytes after it are WebSocket frames.
        case complete(WebSocketUpgradeRequest, headLength: Int)
        /// The head is too large or malformed: answer with this refusal and close.
        case refused(WebSocketRefusal)
    }

    /// Parses the head at the front of `bytes`; a head (or a partial head) longer than `maxHeadSize` is refused
    /// with 431. Works on the bytes (ASCII rules of RFC 9112) and makes Strings only of what it keeps.
    public static func parse(_ bytes: UnsafeRawBufferPointer, maxHeadSize: Int) -> Result {
        guard let end = headEnd(bytes) else {
            return bytes.count > maxHeadSize ? .refused(.headTooLarge(maxHeadSize)) : .incomplete
        }
        guard end <= maxHeadSize else { return .refused(.headTooLarge(maxHeadSize)) }
        let head = UnsafeRawBufferPointer(rebasing: bytes[0..<(end - 4)])
        // Lines, CRLF-separated; a bare CR or LF, or a NUL, is refused.
        var lines: [Range<Int>] = []
        var start = 0
        var index = 0
        while index < head.count {
            switch head[index] {
            case 0:
                return .refused(WebSocketRefusal(status: 400, reason: "the request head holds a NUL byte"))
            case UInt8(ascii: "\r"):
                guard index + 1 < head.count, head[index + 1] == UInt8(ascii: "\n") else {
                    return .refused(WebSocketRefusal(status: 400, reason: "a bare CR in the request head"))
                }
                lines.append(start..<index)
                index += 2
                start = index
            case UInt8(ascii: "\n"):
                return .refused(WebSocketRefusal(status: 400, reason: "a bare LF in the request head"))
            default:
                index += 1
            }
        }
        lines.append(start..<head.count)
        // Request line: METHOD SP TARGET SP VERSION.
        let requestLine = lines[0]
        var spaces: [Int] = []
        for position in requestLine where head[position] == UInt8(ascii: " ") { spaces.append(position) }
        guard spaces.count == 2, spaces[0] > requestLine.lowerBound, spaces[1] > spaces[0] + 1,
            isToken(head, requestLine.lowerBound..<spaces[0]), head[spaces[0] + 1] == UInt8(ascii: "/")
        else {
            return .refused(WebSocketRefusal(status: 400, reason: "malformed request line"))
        }
        let version = text(head, (spaces[1] + 1)..<requestLine.upperBound)
        guard isHTTP11OrLater(version) else {
            return .refused(WebSocketRefusal(status: 400, reason: "the upgrade needs HTTP/1.1, got '\(version.prefix(16))'"))
        }
        var fields: [WebSocketUpgradeRequest.Field] = []
        fields.reserveCapacity(lines.count - 1)
        for line in lines.dropFirst() {
            guard let colon = line.first(where: { head[$0] == UInt8(ascii: ":") }) else {
                return .refused(WebSocketRefusal(status: 400, reason: "malformed header line"))
            }
            // Also catches obsolete line folding (a line starting with a space) and a space before the colon.
            guard colon > line.lowerBound, isToken(head, line.lowerBound..<colon) else {
                return .refused(WebSocketRefusal(status: 400, reason: "malformed header name"))
            }
            var valueStart = colon + 1
            var valueEnd = line.upperBound
            while valueStart < valueEnd, head[valueStart] == UInt8(ascii: " ") || head[valueStart] == UInt8(ascii: "\t") { valueStart += 1 }
            while valueEnd > valueStart, head[valueEnd - 1] == UInt8(ascii: " ") || head[valueEnd - 1] == UInt8(ascii: "\t") { valueEnd -= 1 }
            fields.append(WebSocketUpgradeRequest.Field(name: text(head, line.lowerBound..<colon, lowercased: true), value: text(head, valueStart..<valueEnd)))
        }
        let request = WebSocketUpgradeRequest(
            method: text(head, requestLine.lowerBound..<spaces[0]),
            target: text(head, (spaces[0] + 1)..<spaces[1]),
            version: version,
            fields: fields
        )
        return .complete(request, headLength: end)
    }

    /// Whether `range` of `bytes` is a non-empty RFC 9110 token (method and header names).
    private static func isToken(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> Bool {
        !range.isEmpty && range.allSatisfy { tokenBytes[Int(bytes[$0])] }
    }

    /// `tchar`s: letters, digits and ``!#$%&'*+-.^_`|~``.
    private static let tokenBytes: [Bool] = (0..<256).map { byte in
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
        default: "!#$%&'*+-.^_`|~".utf8.contains(UInt8(byte))
        }
    }

    /// The text of `range` (lower-cased ASCII letters with `lowercased`).
    private static func text(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>, lowercased: Bool = false) -> String {
        asciiString(UnsafeRawBufferPointer(rebasing: bytes[range]), lowercased: lowercased)
    }

    /// `bytes` as a String in one copy (invalid UTF-8 is repaired), ASCII letters lower-cased with `lowercased`.
    static func asciiString(_ bytes: UnsafeRawBufferPointer, lowercased: Bool) -> String {
        String(unsafeUninitializedCapacity: bytes.count) { out in
            for index in 0..<bytes.count {
                let byte = bytes[index]
                out[index] = lowercased && byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
            }
            return bytes.count
        }
    }

    /// The offset just past the first `\r\n\r\n`, if any.
    static func headEnd(_ bytes: UnsafeRawBufferPointer) -> Int? {
        guard bytes.count >= 4 else { return nil }
        var index = 0
        while index + 3 < bytes.count {
            if bytes[index + 3] != UInt8(ascii: "\n") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "\r") && bytes[index + 1] == UInt8(ascii: "\n") && bytes[index + 2] == UInt8(ascii: "\r") {
                return index + 4
            }
            index += 1
        }
        return nil
    }

    private static func isHTTP11OrLater(_ version: String) -> Bool {
        guard version.hasPrefix("HTTP/") else { return false }
        let numbers = version.dropFirst(5).split(separator: ".", omittingEmptySubsequences: false)
        guard numbers.count == 2, let major = Int(numbers[0]), let minor = Int(numbers[1]), numbers[1].count <= 3 else { return false }
        return major == 1 && minor >= 1
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs (HTTP's optional whitespace).
    var trimmingOptionalWhitespace: String {
        var slice = Substring(self)
        while let first = slice.first, first == " " || first == "\t" { slice = slice.dropFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice = slice.dropLast() }
        return String(slice)
    }
}
