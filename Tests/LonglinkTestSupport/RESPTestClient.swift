import Foundation
import Glibc

/// A tiny blocking RESP2 client for test set-up (cluster health checks, `CLUSTER NODES`, `DEBUG`…), independent
/// of the adapter under test: one TCP connection to 127.0.0.1, one command at a time, a receive timeout.
public final class RESPTestClient {
    /// One reply.
    public enum Reply: Hashable, Sendable, CustomStringConvertible {
        case status(String)
        case error(String)
        case integer(Int64)
        case bulk(String)
        case null
        case array([Reply])

        /// The text of a status or bulk reply.
        public var string: String? {
            switch self {
            case .status(let text), .bulk(let text): text
            default: nil
            }
        }

        /// The elements of an array reply.
        public var array: [Reply]? { if case .array(let elements) = self { elements } else { nil } }

        /// The value of an integer reply.
        public var integer: Int64? { if case .integer(let value) = self { value } else { nil } }

        public var description: String {
            switch self {
            case .status(let text): "+\(text)"
            case .error(let text): "-\(text)"
            case .integer(let value): ":\(value)"
            case .bulk(let text): "\"\(text)\""
            case .null: "(nil)"
            case .array(let elements): "[" + elements.map(\.description).joined(separator: ", ") + "]"
            }
        }
    }

    private let fd: Int32
    private var buffer: [UInt8] = []
    private var position = 0

    /// Connects to `127.0.0.1:port`; throws when nothing listens there.
    public init(port: Int, timeout: Duration = .seconds(5)) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RedisServerError("socket: \(String(cString: strerror(errno)))") }
        let seconds = Int(timeout.components.seconds)
        var interval = timeval(tv_sec: max(1, seconds), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            let why = String(cString: strerror(errno))
            close(fd)
            throw RedisServerError("connect to 127.0.0.1:\(port): \(why)")
        }
    }

    deinit { close(fd) }

    /// Sends one command and reads its reply (an error reply is returned, not thrown).
    @discardableResult
    public func command(_ arguments: [String]) throws -> Reply {
        var request = Array("*\(arguments.count)\r\n".utf8)
        for argument in arguments {
            let bytes = Array(argument.utf8)
            request += Array("$\(bytes.count)\r\n".utf8) + bytes + [13, 10]
        }
        var sent = 0
        while sent < request.count {
            let count = request[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { throw RedisServerError("send: \(String(cString: strerror(errno)))") }
            sent += count
        }
        return try reply()
    }

    /// Runs `command` and returns a status or bulk reply's text; throws on an error reply.
    public func text(_ arguments: [String]) throws -> String {
        let answer = try command(arguments)
        if case .error(let message) = answer { throw RedisServerError("\(arguments.joined(separator: " ")): \(message)") }
        return answer.string ?? answer.description
    }

    private func reply() throws -> Reply {
        let line = try readLine()
        guard let marker = line.first else { throw RedisServerError("empty RESP line") }
        let rest = String(line.dropFirst())
        switch marker {
        case "+": return .status(rest)
        case "-": return .error(rest)
        case ":": return .integer(Int64(rest) ?? 0)
        case "$":
            let length = Int(rest) ?? -1
            guard length >= 0 else { return .null }
            let bytes = try readBytes(length + 2)
            return .bulk(String(decoding: bytes.prefix(length), as: UTF8.self))
        case "*":
            let count = Int(rest) ?? -1
            guard count >= 0 else { return .null }
            var elements: [Reply] = []
            for _ in 0..<count { elements.append(try reply()) }
            return .array(elements)
        default:
            throw RedisServerError("unexpected RESP marker \(marker)")
        }
    }

    private func readLine() throws -> String {
        while true {
            if let end = buffer[position...].firstIndex(of: 10), end > position, buffer[end - 1] == 13 {
                let line = String(decoding: buffer[position..<(end - 1)], as: UTF8.self)
                position = end + 1
                return line
            }
            try fill()
        }
    }

    private func readBytes(_ count: Int) throws -> ArraySlice<UInt8> {
        while buffer.count - position < count { try fill() }
        defer { position += count }
        return buffer[position..<(position + count)]
    }

    private func fill() throws {
        if position > 0 {
            buffer.removeFirst(position)
            position = 0
        }
        var chunk = [UInt8](repeating: 0, count: 16_384)
        let count = recv(fd, &chunk, chunk.count, 0)
        guard count > 0 else { throw RedisServerError("recv: \(count == 0 ? "closed" : String(cString: strerror(errno)))") }
        buffer += chunk[..<count]
    }
}
