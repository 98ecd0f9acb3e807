import Glibc

/// One HTTP response as a test reads it off the wire.
public struct HTTPTestResponse: Sendable {
    /// The status code.
    public var status: Int
    /// Header fields as received (names lower-cased).
    public var headers: [(name: String, value: String)]
    /// The body (de-chunked when chunked).
    public var body: [UInt8]

    /// The body as text.
    public var text: String { String(decoding: body, as: UTF8.self) }

    /// The first value of header `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        headers.first { $0.name == name.lowercased() }?.value
    }
}

/// A blocking HTTP/1.1 client over a raw socket for tests: sends exactly the bytes a test wants (good requests,
/// garbage, half a request) and reads responses with a deadline. No Foundation, no URLSession.
public final class HTTPTestClient {
    /// The socket.
    public let fd: CInt
    private var inbound: [UInt8] = []
    /// True once the server closed the connection.
    public private(set) var closed = false

    /// Connects to 127.0.0.1:`port`; `receiveBuffer` sets `SO_RCVBUF` before the connect (see
    /// `LoopbackSocket.connect`: set later, it makes a stalled reader's connection drop and retransmit).
    public init(port: Int, receiveBuffer: Int? = nil) throws {
        do {
            fd = try LoopbackSocket.connect(port: port, receiveBuffer: receiveBuffer)
        } catch {
            throw HTTPTestError("connect to port \(port): \(error)")
        }
    }

    deinit { Glibc.close(fd) }

    /// Sends text as is.
    public func send(_ text: String) throws { try send(Array(text.utf8)) }

    /// Sends bytes as they are.
    public func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw HTTPTestError("send: errno \(errno)")
            }
            offset += n
        }
    }

    /// Sends one request (with `Host`, and `Content-Length` when there is a body).
    public func request(
        _ method: String,
        _ target: String,
        headers: [(String, String)] = [],
        body: String? = nil
    ) throws {
        var text = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if let body { text += "Content-Length: \(body.utf8.count)\r\n" }
        text += "\r\n" + (body ?? "")
        try send(text)
    }

    /// Reads whatever arrives within `timeout` (at least one read); returns the new bytes.
    @discardableResult
    public func receiveSome(timeout milliseconds: Int32 = 5_000) -> [UInt8] {
        guard !closed else { return [] }
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&pfd, 1, milliseconds) > 0 else { return [] }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n <= 0 {
            closed = true
            return []
        }
        inbound += buffer[0..<n]
        return Array(buffer[0..<n])
    }

    /// Everything received and not yet consumed by `readResponse`.
    public var buffered: [UInt8] { inbound }

    /// Reads until `condition` holds for the buffered bytes, the server closes, or `seconds` pass.
    @discardableResult
    public func receive(until condition: ([UInt8]) -> Bool, seconds: Double = 10) -> Bool {
        let deadline = Double(clockMillis()) + seconds * 1000
        while !condition(inbound) {
            if closed || Double(clockMillis()) > deadline { return condition(inbound) }
            receiveSome(timeout: 100)
        }
        return true
    }

    /// Reads one whole response (Content-Length or chunked body); nil when none arrives within `seconds`.
    /// `headOnly` for the answer to a HEAD request (no body follows its Content-Length).
    public func readResponse(seconds: Double = 10, headOnly: Bool = false) -> HTTPTestResponse? {
        var parsed: (HTTPTestResponse, Int)?
        _ = receive(until: { bytes in
            parsed = Self.parse(bytes, headOnly: headOnly)
            return parsed != nil
        }, seconds: seconds)
        guard let (response, consumed) = parsed else { return nil }
        inbound.removeFirst(consumed)
        return response
    }

    /// Whether the server closes the connection within `seconds` (reading and dropping what arrives).
    public func waitForClose(seconds: Double = 10) -> Bool {
        _ = receive(until: { _ in false }, seconds: seconds)
        return closed
    }

    /// One-shot: connects, sends one request with `Connection: close`, reads the response.
    public static func fetch(
        port: Int,
        _ method: String,
        _ target: String,
        headers: [(String, String)] = [],
        body: String? = nil
    ) throws -> HTTPTestResponse {
        let client = try HTTPTestClient(port: port)
        try client.request(method, target, headers: headers + [("Connection", "close")], body: body)
        guard let response = client.readResponse() else { throw HTTPTestError("no response to \(method) \(target)") }
        return response
    }

    /// Parses a complete response at the front of `bytes`, with how many bytes it used.
    static func parse(_ bytes: [UInt8], headOnly: Bool = false) -> (HTTPTestResponse, Int)? {
        guard let headEnd = find(bytes, [13, 10, 13, 10], from: 0) else { return nil }
        let head = String(decoding: bytes[0..<headEnd], as: UTF8.self)
        var lines = head.split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { return nil }
        let headers = lines.compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (line[..<colon].lowercased(), String(line[line.index(after: colon)...]).trimmingCharacters(in: " "))
        }
        var response = HTTPTestResponse(status: status, headers: headers, body: [])
        var index = headEnd + 4
        if headOnly { return (response, index) }
        if response.header("transfer-encoding") == "chunked" {
            while true {
                guard let lineEnd = find(bytes, [13, 10], from: index),
                    let size = Int(String(decoding: bytes[index..<lineEnd], as: UTF8.self), radix: 16)
                else { return nil }
                let start = lineEnd + 2
                guard bytes.count >= start + size + 2 else { return nil }
                response.body += bytes[start..<start + size]
                index = start + size + 2
                if size == 0 { return (response, index) }
            }
        }
        let length = Int(response.header("content-length") ?? "0") ?? 0
        guard bytes.count >= index + length else { return nil }
        response.body = Array(bytes[index..<index + length])
        return (response, index + length)
    }

    private static func find(_ bytes: [UInt8], _ pattern: [UInt8], from start: Int) -> Int? {
        guard bytes.count >= pattern.count, start <= bytes.count - pattern.count else { return nil }
        for index in start...(bytes.count - pattern.count) where bytes[index] == pattern[0] {
            if Array(bytes[index..<index + pattern.count]) == pattern { return index }
        }
        return nil
    }

    private func clockMillis() -> Int {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return ts.tv_sec * 1000 + ts.tv_nsec / 1_000_000
    }
}

/// A test client failure.
public struct HTTPTestError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

extension String {
    fileprivate func trimmingCharacters(in set: Character) -> String {
        var text = Substring(self)
        while text.first == set { text = text.dropFirst() }
        while text.last == set { text = text.dropLast() }
        return String(text)
    }
}
