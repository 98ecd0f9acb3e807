/// One parsed HTTP/1.x request: method, target (path and query), version, headers and the whole body.
///
/// Header names are kept lower-cased (HTTP names are case-insensitive); the path is kept as sent (percent-encoded)
/// and `pathSegments`/`query` decode it. No Foundation: everything is plain Swift strings and bytes.
public struct HTTPRequest: Sendable {
    /// The method token as sent (`GET`, `POST`, ...).
    public var method: String
    /// The request target's path, percent-encoded as sent (`/admin/connections`).
    public var path: String
    /// The raw query string after `?` (empty when none).
    public var rawQuery: String
    /// The minor version: 0 for HTTP/1.0, 1 for HTTP/1.1.
    public var minorVersion: Int
    /// Header fields in arrival order, names lower-cased.
    public var headers: [(name: String, value: String)]
    /// The body (`Content-Length` bytes; empty when none).
    public var body: [UInt8]

    /// Creates a request (tests and handlers that forward requests).
    public init(
        method: String,
        path: String,
        rawQuery: String = "",
        minorVersion: Int = 1,
        headers: [(name: String, value: String)] = [],
        body: [UInt8] = []
    ) {
        self.method = method
        self.path = path
        self.rawQuery = rawQuery
        self.minorVersion = minorVersion
        self.headers = headers.map { ($0.name.lowercasedASCII, $0.value) }
        self.body = body
    }

    /// The first value of header `name` (case-insensitive), or nil.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercasedASCII
        return headers.first { $0.name == wanted }?.value
    }

    /// Whether the connection stays open after the response: HTTP/1.1 unless `Connection: close`, HTTP/1.0 only
    /// with `Connection: keep-alive`.
    public var keepAlive: Bool {
        let tokens = headers.filter { $0.name == "connection" }
            .flatMap { $0.value.split(separator: ",").map { $0.trimmingWhitespace.lowercasedASCII } }
        if minorVersion == 0 { return tokens.contains("keep-alive") }
        return !tokens.contains("close")
    }

    /// The query parameters, decoded (`+` is a space, `%XX` a byte), in order; a name without `=` has an empty value.
    public var query: [(name: String, value: String)] {
        guard !rawQuery.isEmpty else { return [] }
        return rawQuery.split(separator: "&").compactMap { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = Self.percentDecode(parts[0], plusIsSpace: true), !name.isEmpty else { return nil }
            let value = parts.count > 1 ? Self.percentDecode(parts[1], plusIsSpace: true) ?? "" : ""
            return (name, value)
        }
    }

    /// The first query value named `name`, or nil.
    public func queryValue(_ name: String) -> String? {
        query.first { $0.name == name }?.value
    }

    /// The decoded path segments (`/admin/orders/taxi/8812` → `["admin", "orders", "taxi", "8812"]`); nil when a
    /// segment has an invalid percent escape.
    public var pathSegments: [String]? {
        var segments: [String] = []
        for part in path.split(separator: "/", omittingEmptySubsequences: true) {
            guard let decoded = Self.percentDecode(part, plusIsSpace: false) else { return nil }
            segments.append(decoded)
        }
        return segments
    }

    /// The body as UTF-8 text (invalid sequences replaced).
    public var bodyText: String { String(decoding: body, as: UTF8.self) }

    /// Decodes `%XX` escapes (and `+` when `plusIsSpace`); nil on a malformed escape.
    public static func percentDecode(_ text: some StringProtocol, plusIsSpace: Bool) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                    return nil
                }
                bytes.append(high << 4 | low)
            case UInt8(ascii: "+") where plusIsSpace:
                bytes.append(UInt8(ascii: " "))
            default:
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Encodes everything but unreserved characters as `%XX` (for building query strings and links).
    public static func percentEncode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."),
                UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let digits = Array("0123456789ABCDEF".utf8)
                out += "%"
                out.unicodeScalars.append(Unicode.Scalar(digits[Int(byte >> 4)]))
                out.unicodeScalars.append(Unicode.Scalar(digits[Int(byte & 0xF)]))
            }
        }
        return out
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension StringProtocol {
    /// ASCII lower-casing without Foundation (header names and tokens are ASCII).
    var lowercasedASCII: String {
        String(
            decoding: utf8.map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") ? $0 + 32 : $0 },
            as: UTF8.self
        )
    }

    /// Without leading and trailing spaces and tabs.
    var trimmingWhitespace: Substring {
        let text = Substring(self)
        guard let first = text.firstIndex(where: { $0 != " " && $0 != "\t" }) else { return "" }
        let last = text.lastIndex(where: { $0 != " " && $0 != "\t" })!
        return text[first...last]
    }
}
