/// The status line and headers of an HTTP/1.1 response.
public struct HTTPResponseHead: Hashable, Sendable {
    /// The status code.
    public var status: Int
    /// The reason phrase.
    public var reason: String
    /// Header values by lower-cased name (the last one wins).
    public var headers: [String: String]
}

/// Why an admin request failed.
public struct AdminError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What failed.
    public var message: String
    /// The HTTP status, when the server answered.
    public var status: Int?

    /// Creates an error.
    public init(_ message: String, status: Int? = nil) {
        self.message = message
        self.status = status
    }

    public var description: String { message }
}

/// Reads an HTTP/1.1 response incrementally: the head, then the body as it arrives (Content-Length, chunked
/// transfer coding, or until the connection closes).
public struct HTTPResponseReader: Sendable {
    private enum Body: Sendable {
        case length(Int)
        case chunked(ChunkState)
        case untilClose
    }

    private enum ChunkState: Sendable {
        case size([UInt8])  // reading the chunk-size line
        case data(Int)  // bytes left in the chunk
        case dataEnd(Int)  // CRLF after a chunk's data: bytes of it left
        case trailer([UInt8])  // after the last chunk
        case done
    }

    private var headBytes: [UInt8] = []
    /// The head, once complete.
    public private(set) var head: HTTPResponseHead?
    private var body: Body = .untilClose
    /// Whether the body is complete (a length reached, or the last chunk read).
    public private(set) var isComplete = false

    /// Creates a reader.
    public init() {}

    /// Adds bytes from the connection; returns the body bytes they contain.
    public mutating func feed(_ bytes: [UInt8]) throws(AdminError) -> [UInt8] {
        var input = bytes[...]
        if head == nil {
            headBytes += input
            guard let end = Self.headEnd(headBytes) else {
                guard headBytes.count < 64 * 1024 else { throw AdminError("HTTP response head larger than 64 KiB") }
                return []
            }
            let parsed = try Self.parseHead(Array(headBytes[..<end]))
            head = parsed
            input = headBytes[(end + 4)...]
            headBytes = []
            if parsed.headers["transfer-encoding"]?.lowercased().contains("chunked") == true {
                body = .chunked(.size([]))
            } else if let length = parsed.headers["content-length"].flatMap({ Int($0.trimmingSpaces) }) {
                body = .length(length)
                if length == 0 { isComplete = true }
            }
        }
        return try bodyBytes(input)
    }

    private mutating func bodyBytes(_ input: ArraySlice<UInt8>) throws(AdminError) -> [UInt8] {
        switch body {
        case .untilClose:
            return Array(input)
        case .length(let left):
            let take = min(left, input.count)
            body = .length(left - take)
            if left - take == 0 { isComplete = true }
            return Array(input.prefix(take))
        case .chunked(var state):
            var out: [UInt8] = []
            var index = input.startIndex
            while index < input.endIndex {
                switch state {
                case .size(var line):
                    let byte = input[index]
                    index += 1
                    if byte == 0x0A {
                        let text = String(decoding: line, as: UTF8.self).trimmingSpaces
                        let sizeText = text.split(separator: ";").first.map(String.init) ?? ""
                        guard let size = Int(sizeText.trimmingSpaces, radix: 16), size >= 0 else {
                            throw AdminError("bad chunk size line '\(text)' in the HTTP response")
                        }
                        state = size == 0 ? .trailer([]) : .data(size)
                    } else if byte != 0x0D {
                        line.append(byte)
                        guard line.count < 1024 else { throw AdminError("chunk size line too long") }
                        state = .size(line)
                    }
                case .data(let left):
                    let take = min(left, input.endIndex - index)
                    out += input[index..<(index + take)]
                    index += take
                    state = left - take == 0 ? .dataEnd(2) : .data(left - take)
                case .dataEnd(let left):
                    let byte = input[index]
                    index += 1
                    if byte == 0x0A { state = .size([]) } else { state = .dataEnd(left - 1) }
                case .trailer(var line):
                    let byte = input[index]
                    index += 1
                    if byte == 0x0A {
                        if line.isEmpty {
                            state = .done
                            isComplete = true
                        } else {
                            state = .trailer([])
                        }
                    } else if byte != 0x0D {
                        line.append(byte)
                        state = .trailer(line)
                    }
                case .done:
                    index = input.endIndex
                }
            }
            body = .chunked(state)
            return out
        }
    }

    static func headEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4)
        where bytes[index] == 0x0D && bytes[index + 1] == 0x0A && bytes[index + 2] == 0x0D && bytes[index + 3] == 0x0A {
            return index
        }
        return nil
    }

    static func parseHead(_ bytes: [UInt8]) throws(AdminError) -> HTTPResponseHead {
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\r\n", omittingEmptySubsequences: false)
        let status = lines.first.map { $0.split(separator: " ", maxSplits: 2) } ?? []
        guard status.count >= 2, status[0].hasPrefix("HTTP/1."), let code = Int(status[1]) else {
            throw AdminError("not an HTTP/1.x response: '\(lines.first ?? "")'")
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = String(line[line.index(after: colon)...]).trimmingSpaces
        }
        return HTTPResponseHead(status: code, reason: status.count > 2 ? String(status[2]) : "", headers: headers)
    }
}

extension String {
    /// Without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        let scalars = unicodeScalars
        guard let start = scalars.firstIndex(where: { $0 != " " && $0 != "\t" }) else { return "" }
        let end = scalars.lastIndex(where: { $0 != " " && $0 != "\t" })!
        return String(scalars[start...end])
    }
}
