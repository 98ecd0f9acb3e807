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
        values(name).flatMap { value in
            value.split(separator: ",").map { token in
                let trimmed = token.trimmingOptionalWhitespace
                return lowercased ? trimmed.lowercased() : trimmed
            }
        }.filter { !$0.isEmpty }
    }

    /// The path part of the target (before `?`).
    public var path: Substring { target.prefix { $0 != "?" } }
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
    /// with 431.
    public static func parse(_ bytes: UnsafeRawBufferPointer, maxHeadSize: Int) -> Result {
        guard let end = headEnd(bytes) else {
            return bytes.count > maxHeadSize ? .refused(.headTooLarge(maxHeadSize)) : .incomplete
        }
        guard end <= maxHeadSize else { return .refused(.headTooLarge(maxHeadSize)) }
        let head = Array(bytes[0..<(end - 4)])
        if head.contains(0) {
            return .refused(WebSocketRefusal(status: 400, reason: "the request head holds a NUL byte"))
        }
        var lines: [ArraySlice<UInt8>] = []
        var start = 0
        var index = 0
        while index < head.count {
            if head[index] == UInt8(ascii: "\r") {
                guard index + 1 < head.count, head[index + 1] == UInt8(ascii: "\n") else {
                    return .refused(WebSocketRefusal(status: 400, reason: "a bare CR in the request head"))
                }
                lines.append(head[start..<index])
                index += 2
                start = index
            } else if head[index] == UInt8(ascii: "\n") {
                return .refused(WebSocketRefusal(status: 400, reason: "a bare LF in the request head"))
            } else {
                index += 1
            }
        }
        lines.append(head[start..<head.count])
        guard let requestLine = lines.first.map({ String(decoding: $0, as: UTF8.self) }) else {
            return .refused(WebSocketRefusal(status: 400, reason: "empty request"))
        }
        let parts = requestLine.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, parts[0].allSatisfy(\.isTokenCharacter), parts[1].hasPrefix("/") else {
            return .refused(WebSocketRefusal(status: 400, reason: "malformed request line"))
        }
        let version = String(parts[2])
        guard isHTTP11OrLater(version) else {
            return .refused(WebSocketRefusal(status: 400, reason: "the upgrade needs HTTP/1.1, got '\(version.prefix(16))'"))
        }
        var fields: [WebSocketUpgradeRequest.Field] = []
        for line in lines.dropFirst() {
            let text = String(decoding: line, as: UTF8.self)
            guard let colon = text.firstIndex(of: ":") else {
                return .refused(WebSocketRefusal(status: 400, reason: "malformed header line"))
            }
            let name = text[..<colon]
            guard !name.isEmpty, name.allSatisfy(\.isTokenCharacter) else {
                // Also catches obsolete line folding (a line starting with a space) and a space before the colon.
                return .refused(WebSocketRefusal(status: 400, reason: "malformed header name"))
            }
            let value = text[text.index(after: colon)...].trimmingOptionalWhitespace
            fields.append(WebSocketUpgradeRequest.Field(name: name.lowercased(), value: value))
        }
        let request = WebSocketUpgradeRequest(method: String(parts[0]), target: String(parts[1]), version: version, fields: fields)
        return .complete(request, headLength: end)
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

extension Character {
    /// An RFC 9110 `tchar` (method and header names).
    var isTokenCharacter: Bool {
        guard let ascii = asciiValue else { return false }
        switch ascii {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(ascii)
        }
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
