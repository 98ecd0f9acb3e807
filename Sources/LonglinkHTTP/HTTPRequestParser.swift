/// Size limits for requests; anything past them is refused with the status that says which limit.
public struct HTTPLimits: Sendable, Hashable {
    /// The longest request line (method, target, version): past it, 414.
    public var maxRequestLineBytes: Int
    /// The largest header section (request line included): past it, 431.
    public var maxHeadBytes: Int
    /// The most header fields: past it, 431.
    public var maxHeaderCount: Int
    /// The largest body: past it, 413.
    public var maxBodyBytes: Int

    /// Creates limits (defaults fit an admin API: 8 KiB line, 16 KiB head, 100 fields, 1 MiB body).
    public init(
        maxRequestLineBytes: Int = 8 * 1024,
        maxHeadBytes: Int = 16 * 1024,
        maxHeaderCount: Int = 100,
        maxBodyBytes: Int = 1 << 20
    ) {
        self.maxRequestLineBytes = maxRequestLineBytes
        self.maxHeadBytes = maxHeadBytes
        self.maxHeaderCount = maxHeaderCount
        self.maxBodyBytes = maxBodyBytes
    }
}

/// Why a request was refused before any handler saw it: the status to answer with (the connection then closes).
public struct HTTPParseError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The status to answer with.
    public let status: HTTPStatus
    /// What was wrong, for the response body and logs.
    public let reason: String

    /// Creates an error.
    public init(_ status: HTTPStatus, _ reason: String) {
        self.status = status
        self.reason = reason
    }

    public var description: String { "HTTPParseError(\(status.code)): \(reason)" }
}

/// Parses one HTTP/1.0 or 1.1 request from the front of a byte buffer, or says it needs more bytes.
///
/// Strict where strictness protects the server (request-line shape, token characters, no obsolete line folding,
/// one consistent `Content-Length`, `Host` on HTTP/1.1) and tolerant where clients differ (bare LF line ends,
/// empty lines before the request line). Chunked request bodies are refused with 411: the admin API's bodies are
/// small JSON documents, always sent with a length.
public enum HTTPRequestParser {
    /// The outcome of one attempt.
    public enum Outcome: Sendable {
        /// The bytes so far are a valid prefix of a request; read more.
        case needMoreData
        /// A whole request, and how many bytes from the front it used.
        case request(HTTPRequest, consumed: Int)
    }

    /// Parses the request at the front of `bytes`.
    public static func parse(_ bytes: ArraySlice<UInt8>, limits: HTTPLimits) throws(HTTPParseError) -> Outcome {
        var start = bytes.startIndex
        // Robustness (RFC 9112 §2.2): ignore empty lines before the request line.
        while start < bytes.endIndex && (bytes[start] == 13 || bytes[start] == 10) { start += 1 }
        guard start < bytes.endIndex else { return .needMoreData }

        let firstLineEnd = bytes[start...].firstIndex(of: 10)
        let firstLineLength = (firstLineEnd ?? bytes.endIndex) - start
        if firstLineLength > limits.maxRequestLineBytes {
            throw HTTPParseError(.uriTooLong, "request line longer than \(limits.maxRequestLineBytes) bytes")
        }
        guard let headEnd = endOfHead(bytes, from: start) else {
            if bytes.endIndex - start > limits.maxHeadBytes {
                throw HTTPParseError(.headerFieldsTooLarge, "header section larger than \(limits.maxHeadBytes) bytes")
            }
            // Fail fast on a request line that is already wrong, instead of waiting for the rest of the head.
            if let firstLineEnd { _ = try requestLine(bytes[start..<firstLineEnd]) }
            return .needMoreData
        }
        if headEnd.contentStart - start > limits.maxHeadBytes {
            throw HTTPParseError(.headerFieldsTooLarge, "header section larger than \(limits.maxHeadBytes) bytes")
        }

        var lines = split(bytes[start..<headEnd.lastLineEnd])
        let (method, target, minor) = try requestLine(lines.removeFirst())
        guard lines.count <= limits.maxHeaderCount else {
            throw HTTPParseError(.headerFieldsTooLarge, "more than \(limits.maxHeaderCount) header fields")
        }
        var headers: [(name: String, value: String)] = []
        headers.reserveCapacity(lines.count)
        for line in lines { headers.append(try headerField(line)) }

        if minor == 1 && !headers.contains(where: { $0.name == "host" }) {
            throw HTTPParseError(.badRequest, "HTTP/1.1 request without a Host header")
        }
        if headers.contains(where: { $0.name == "transfer-encoding" }) {
            throw HTTPParseError(.lengthRequired, "chunked request bodies are not accepted; send Content-Length")
        }
        let lengths = headers.filter { $0.name == "content-length" }.map(\.value)
        var bodyLength = 0
        if let first = lengths.first {
            guard lengths.allSatisfy({ $0 == first }), !first.isEmpty, first.utf8.count <= 18,
                first.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }), let length = Int(first)
            else { throw HTTPParseError(.badRequest, "invalid Content-Length") }
            bodyLength = length
        } else if ["POST", "PUT", "PATCH"].contains(method) {
            throw HTTPParseError(.lengthRequired, "\(method) needs a Content-Length")
        }
        guard bodyLength <= limits.maxBodyBytes else {
            throw HTTPParseError(.contentTooLarge, "body of \(bodyLength) bytes is larger than \(limits.maxBodyBytes)")
        }
        let bodyEnd = headEnd.contentStart + bodyLength
        guard bodyEnd <= bytes.endIndex else { return .needMoreData }

        var path = target
        var rawQuery = ""
        if let question = target.firstIndex(of: "?") {
            path = String(target[..<question])
            rawQuery = String(target[target.index(after: question)...])
        }
        let request = HTTPRequest(
            method: method,
            path: path,
            rawQuery: rawQuery,
            minorVersion: minor,
            headers: headers,
            body: Array(bytes[headEnd.contentStart..<bodyEnd])
        )
        return .request(request, consumed: bodyEnd - bytes.startIndex)
    }

    /// Finds the empty line ending the header section: the end of the last header line and the first body byte.
    private static func endOfHead(_ bytes: ArraySlice<UInt8>, from start: Int) -> (lastLineEnd: Int, contentStart: Int)? {
        var index = start
        while let newline = bytes[index...].firstIndex(of: 10) {
            let next = newline + 1
            if next < bytes.endIndex && bytes[next] == 10 { return (newline, next + 1) }
            if next + 1 < bytes.endIndex && bytes[next] == 13 && bytes[next + 1] == 10 { return (newline, next + 2) }
            if next >= bytes.endIndex || (next + 1 >= bytes.endIndex && bytes[next] == 13) { return nil }
            index = next
        }
        return nil
    }

    /// Splits the head into lines, dropping the CR of CRLF endings.
    private static func split(_ head: ArraySlice<UInt8>) -> [ArraySlice<UInt8>] {
        head.split(separator: 10, omittingEmptySubsequences: false).map { line in
            line.last == 13 ? line.dropLast() : line
        }
    }

    private static func requestLine(_ raw: ArraySlice<UInt8>) throws(HTTPParseError) -> (String, String, Int) {
        let line = raw.last == 13 ? raw.dropLast() : raw
        let parts = line.split(separator: 32, omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw HTTPParseError(.badRequest, "malformed request line") }
        let method = parts[0]
        guard !method.isEmpty, method.allSatisfy(isTokenByte) else {
            throw HTTPParseError(.badRequest, "malformed method")
        }
        let target = parts[1]
        guard let first = target.first, first == UInt8(ascii: "/") || (target.count == 1 && first == UInt8(ascii: "*")),
            target.allSatisfy({ $0 > 32 && $0 < 127 })
        else { throw HTTPParseError(.badRequest, "malformed request target") }
        let version = Array(parts[2])
        let prefix = Array("HTTP/".utf8)
        guard version.count == 8, Array(version[0..<5]) == prefix, isDigit(version[5]), version[6] == UInt8(ascii: "."),
            isDigit(version[7])
        else { throw HTTPParseError(.badRequest, "malformed HTTP version") }
        guard version[5] == UInt8(ascii: "1"), version[7] == UInt8(ascii: "0") || version[7] == UInt8(ascii: "1") else {
            throw HTTPParseError(.versionNotSupported, "only HTTP/1.0 and HTTP/1.1 are supported")
        }
        return (
            String(decoding: method, as: UTF8.self), String(decoding: target, as: UTF8.self),
            Int(version[7] - UInt8(ascii: "0"))
        )
    }

    private static func headerField(_ line: ArraySlice<UInt8>) throws(HTTPParseError) -> (name: String, value: String) {
        guard let first = line.first, first != 32, first != 9 else {
            throw HTTPParseError(.badRequest, "obsolete header line folding or empty header name")
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
            throw HTTPParseError(.badRequest, "header line without ':'")
        }
        let name = line[line.startIndex..<colon]
        guard !name.isEmpty, name.allSatisfy(isTokenByte) else { throw HTTPParseError(.badRequest, "malformed header name") }
        var value = line[(colon + 1)...]
        while let byte = value.first, byte == 32 || byte == 9 { value = value.dropFirst() }
        while let byte = value.last, byte == 32 || byte == 9 { value = value.dropLast() }
        guard value.allSatisfy({ $0 == 9 || ($0 >= 32 && $0 != 127) }) else {
            throw HTTPParseError(.badRequest, "control character in header value")
        }
        return (String(decoding: name, as: UTF8.self).lowercasedASCII, String(decoding: value, as: UTF8.self))
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    /// RFC 9110 `tchar`.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }
}
