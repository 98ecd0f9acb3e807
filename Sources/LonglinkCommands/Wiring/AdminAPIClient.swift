import Glibc
import LonglinkHTTP
import LonglinkLoop

/// A small blocking HTTP/1.1 client for the CLI's calls to the admin API: one request per connection
/// (`Connection: close`), the response read to the end, a deadline on every wait.
struct AdminAPIClient: Sendable {
    /// Where the operations listener runs.
    var address: HostPort
    /// The admin bearer token.
    var token: String
    /// The longest a call may take.
    var timeoutMillis: Int32

    /// Sends one request with an optional JSON body; returns the status and the parsed JSON body.
    func call(_ method: String, _ path: String, body: JSONValue? = nil) throws(CommandFailure) -> (status: Int, body: JSONValue) {
        let fd: CInt
        do {
            let (socket, connected) = try Socket.connect(to: SocketAddress(ipAddress: address.host, port: Int(address.port)))
            fd = socket
            if !connected {
                var pending = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                guard poll(&pending, 1, timeoutMillis) == 1, try Socket.finishConnect(fd) else {
                    Socket.close(fd)
                    throw IOError(errno: ETIMEDOUT, function: "connect")
                }
            }
        } catch {
            throw CommandFailure("cannot reach the admin API at \(address): \(error)", exitCode: 3)
        }
        defer { Socket.close(fd) }
        let payload = body?.serialized ?? ""
        var request = "\(method) \(path) HTTP/1.1\r\nHost: \(address)\r\nConnection: close\r\nAccept: application/json\r\n"
        request += "Authorization: Bearer \(token)\r\n"
        if body != nil || method == "POST" || method == "PUT" {
            request += "Content-Type: application/json\r\nContent-Length: \(payload.utf8.count)\r\n"
        }
        request += "\r\n" + payload
        var bytes = Array(request.utf8)
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            var pfd = pollfd(fd: fd, events: Int16(bytes.isEmpty ? POLLIN : POLLIN | POLLOUT), revents: 0)
            guard poll(&pfd, 1, timeoutMillis) == 1 else { throw CommandFailure("the admin API did not answer in time", exitCode: 3) }
            do {
                if !bytes.isEmpty, pfd.revents & Int16(POLLOUT) != 0 {
                    if case .processed(let count) = try bytes.withUnsafeBytes({ raw throws(IOError) in try Socket.write(fd, raw) }) {
                        bytes.removeFirst(count)
                    }
                }
                if pfd.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
                    let result = try buffer.withUnsafeMutableBytes { raw throws(IOError) in try Socket.read(fd, into: raw) }
                    if case .processed(let count) = result {
                        if count == 0 { break }
                        received += buffer[0..<count]
                    }
                }
            } catch {
                throw CommandFailure("admin API connection failed: \(error)", exitCode: 3)
            }
        }
        return try Self.parse(received)
    }

    /// Splits a `Connection: close` response into its status and JSON body.
    static func parse(_ bytes: [UInt8]) throws(CommandFailure) -> (status: Int, body: JSONValue) {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = (0..<max(0, bytes.count - 3)).first(where: { Array(bytes[$0..<$0 + 4]) == separator }) else {
            throw CommandFailure("the admin API sent no complete response", exitCode: 3)
        }
        let statusLine = String(decoding: bytes[0..<end], as: UTF8.self).split(separator: "\r\n").first ?? ""
        let parts = statusLine.split(separator: " ")
        guard parts.count >= 2, let status = Int(parts[1]) else {
            throw CommandFailure("the admin API sent a malformed status line", exitCode: 3)
        }
        let body = Array(bytes[(end + 4)...])
        let json = (try? JSONValue.parse(body)) ?? .string(String(decoding: body, as: UTF8.self))
        return (status, json)
    }
}
