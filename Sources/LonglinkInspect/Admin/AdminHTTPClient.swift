import Glibc

/// A small blocking HTTP/1.1 client for the gateway's admin listener: one request per connection
/// (`Connection: close`), with `Authorization: Bearer <token>`. Used by `inspect` and `toggles`; for a command-line
/// tool on its own thread, not for the gateway's loops.
public struct AdminHTTPClient: Sendable {
    /// Host name or address.
    public var host: String
    /// Port.
    public var port: Int
    /// The admin token, sent as a bearer token.
    public var token: String
    /// How long connecting may take.
    public var connectTimeout: Duration

    /// Creates a client.
    public init(host: String, port: Int, token: String, connectTimeout: Duration = .seconds(10)) {
        self.host = host
        self.port = port
        self.token = token
        self.connectTimeout = connectTimeout
    }

    /// `GET path`, returning the head and the whole body.
    public func get(_ path: String, accept: String = "application/json") throws(AdminError) -> (HTTPResponseHead, [UInt8]) {
        try request("GET", path, accept: accept)
    }

    /// One request with an optional JSON body, returning the head and the whole body; gives up after `timeout`.
    /// Non-2xx answers throw `AdminError` with the status and the start of the body.
    public func request(
        _ method: String,
        _ path: String,
        json: [UInt8]? = nil,
        accept: String = "application/json",
        timeout: Duration = .seconds(30)
    ) throws(AdminError) -> (HTTPResponseHead, [UInt8]) {
        var body: [UInt8] = []
        let deadline = ContinuousClock.now + timeout
        let head = try stream(path, method: method, json: json, accept: accept, pollMillis: 250) { chunk in
            body += chunk
            return true
        } idle: {
            ContinuousClock.now < deadline
        }
        return (head, body)
    }

    /// `GET path`, handing body bytes to `onBody` as they arrive until it returns false, the body ends or
    /// the server closes. `idle` runs at least every `pollMillis` while waiting (return false to stop).
    /// Throws for non-2xx answers, with the status.
    @discardableResult
    public func stream(
        _ path: String,
        method: String = "GET",
        json: [UInt8]? = nil,
        accept: String,
        pollMillis: Int32,
        onBody: ([UInt8]) -> Bool,
        idle: () -> Bool
    ) throws(AdminError) -> HTTPResponseHead {
        let fd = try connect()
        defer { close(fd) }
        var request = "\(method) \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nAccept: \(accept)\r\n"
        // Sent even when empty: the gateway's authorizer decides (the development one admits an empty token).
        request += "Authorization: Bearer \(token)\r\n"
        if let json { request += "Content-Type: application/json\r\nContent-Length: \(json.count)\r\n" }
        request += "User-Agent: longlink\r\nConnection: close\r\n\r\n"
        try send(fd, Array(request.utf8) + (json ?? []))
        var reader = HTTPResponseReader()
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        var errorBody: [UInt8] = []
        while true {
            var pollFD = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pollFD, 1, pollMillis)
            if ready < 0 && errno != EINTR { throw AdminError("poll failed: \(String(cString: strerror(errno)))") }
            if ready <= 0 {
                guard idle() else { break }
                continue
            }
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw AdminError("reading from \(host):\(port) failed: \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            let body = try reader.feed(Array(buffer[0..<count]))
            if let head = reader.head, !(200..<300).contains(head.status) {
                errorBody += body
                if reader.isComplete { break }
                continue
            }
            if !body.isEmpty, !onBody(body) { break }
            if reader.isComplete { break }
            guard idle() else { break }
        }
        guard let head = reader.head else { throw AdminError("\(host):\(port) closed the connection without answering") }
        guard (200..<300).contains(head.status) else {
            let text = String(decoding: errorBody.prefix(300), as: UTF8.self).trimmingSpaces
            throw AdminError(
                "\(path): HTTP \(head.status) \(head.reason)" + (text.isEmpty ? "" : ": \(text)"), status: head.status)
        }
        return head
    }

    private func connect() throws(AdminError) -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw AdminError("cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        var lastError = "no address"
        var entry: UnsafeMutablePointer<addrinfo>? = first
        let millis = Int32(clamping: connectTimeout.components.seconds * 1000
            + connectTimeout.components.attoseconds / 1_000_000_000_000_000)
        while let info = entry {
            entry = info.pointee.ai_next
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype | Int32(SOCK_NONBLOCK.rawValue), 0)
            guard fd >= 0 else { continue }
            if Glibc.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 || errno == EINPROGRESS {
                var pollFD = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                if poll(&pollFD, 1, millis) == 1 {
                    var error: Int32 = 0
                    var length = socklen_t(MemoryLayout<Int32>.size)
                    getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
                    if error == 0 {
                        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
                        return fd
                    }
                    lastError = String(cString: strerror(error))
                } else {
                    lastError = "timed out"
                }
            } else {
                lastError = String(cString: strerror(errno))
            }
            close(fd)
        }
        throw AdminError("cannot connect to \(host):\(port): \(lastError)")
    }

    private func send(_ fd: Int32, _ bytes: [UInt8]) throws(AdminError) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if sent < 0 {
                if errno == EINTR { continue }
                throw AdminError("sending to \(host):\(port) failed: \(String(cString: strerror(errno)))")
            }
            offset += sent
        }
    }

    /// Percent-encodes a query parameter value (everything but RFC 3986 unreserved characters).
    public static func queryEscape(_ value: String) -> String {
        var out = ""
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%" + RawWire.paddedHex(UInt64(byte), digits: 2).uppercased()
            }
        }
        return out
    }
}
