import Foundation
import Glibc
import Synchronization

/// A loopback HTTP server for client tests: accepts connections on a free port, records each request head and
/// answers with fixed bytes written in small pieces (so parsers see arbitrary splits). Stopped by `stop()`.
final class OneShotHTTPServer: Sendable {
    let port: Int
    private let fd: Int32
    private let requests = Mutex<[String]>([])
    private let stopped = Atomic<Bool>(false)

    init(response: [UInt8], pieceSize: Int = 7) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        guard bound == 0, listen(fd, 8) == 0 else { throw POSIXError(.EADDRINUSE) }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        port = Int(UInt16(bigEndian: address.sin_port))
        start(listener: fd, response: response, pieceSize: pieceSize)
    }

    private func start(listener: Int32, response: [UInt8], pieceSize: Int) {
        let thread = Thread { [self] in
            while !stopped.load(ordering: .relaxed) {
                var poller = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, 100) == 1 else { continue }
                let client = accept(listener, nil, nil)
                guard client >= 0 else { continue }
                var head: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 4096)
                while !head.containsHeadEnd {
                    let n = buffer.withUnsafeMutableBytes { read(client, $0.baseAddress, $0.count) }
                    if n <= 0 { break }
                    head += buffer[0..<n]
                }
                requests.withLock { $0.append(String(decoding: head, as: UTF8.self)) }
                var offset = 0
                while offset < response.count {
                    let end = min(response.count, offset + pieceSize)
                    _ = response[offset..<end].withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    offset = end
                }
                close(client)
            }
        }
        thread.start()
    }

    /// The request heads received so far.
    var received: [String] { requests.withLock { $0 } }

    func stop() {
        stopped.store(true, ordering: .relaxed)
        close(fd)
    }

    /// An HTTP/1.1 response with a chunked body (chunks of `chunk` bytes).
    static func chunked(status: String = "200 OK", type: String, body: [UInt8], chunk: Int = 50) -> [UInt8] {
        var out = Array("HTTP/1.1 \(status)\r\nContent-Type: \(type)\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
        var offset = 0
        while offset < body.count {
            let end = min(body.count, offset + chunk)
            out += Array("\(String(end - offset, radix: 16));ext=1\r\n".utf8) + body[offset..<end] + Array("\r\n".utf8)
            offset = end
        }
        return out + Array("0\r\nX-Trailer: yes\r\n\r\n".utf8)
    }
}

extension [UInt8] {
    var containsHeadEnd: Bool {
        count >= 4 && (0...(count - 4)).contains { self[$0] == 13 && self[$0 + 1] == 10 && self[$0 + 2] == 13 && self[$0 + 3] == 10 }
    }
}
