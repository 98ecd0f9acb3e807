import Glibc
import CLonglinkLinux

/// An IPv4 or IPv6 address with a port, ready for `bind`/`connect`.
///
/// Holds the `sockaddr_in`/`sockaddr_in6` bytes internally so no C type appears in the API.
public struct SocketAddress: Hashable, Sendable, CustomStringConvertible {
    /// The numeric host, e.g. `127.0.0.1` or `::1`.
    public let host: String
    /// The TCP port.
    public let port: Int
    /// `AF_INET` or `AF_INET6`.
    let family: CInt
    /// The raw `sockaddr_in` or `sockaddr_in6`.
    let storage: [UInt8]

    /// Parses a numeric IPv4 or IPv6 address (`localhost` means `127.0.0.1`; empty means any IPv4 address).
    public init(ipAddress: String, port: Int) throws(IOError) {
        guard (0...65_535).contains(port) else { throw IOError(errno: EINVAL, function: "SocketAddress(port: \(port))") }
        let literal = ipAddress.isEmpty ? "0.0.0.0" : (ipAddress == "localhost" ? "127.0.0.1" : ipAddress)
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, literal, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = in_port_t(UInt16(port).bigEndian)
            self.init(host: literal, port: port, family: AF_INET, raw: v4)
            return
        }
        var v6 = sockaddr_in6()
        let unbracketed = literal.hasPrefix("[") && literal.hasSuffix("]") ? String(literal.dropFirst().dropLast()) : literal
        if inet_pton(AF_INET6, unbracketed, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = in_port_t(UInt16(port).bigEndian)
            self.init(host: unbracketed, port: port, family: AF_INET6, raw: v6)
            return
        }
        throw IOError(errno: EINVAL, function: "inet_pton(\(ipAddress))")
    }

    private init<Raw>(host: String, port: Int, family: CInt, raw: Raw) {
        self.host = host
        self.port = port
        self.family = family
        self.storage = withUnsafeBytes(of: raw) { Array($0) }
    }

    /// Resolves a host name or numeric address with `getaddrinfo` (blocking: call it at start-up, not on a loop).
    /// Returns IPv4 and IPv6 addresses in the resolver's order.
    public static func resolve(host: String, port: Int) throws(IOError) -> [SocketAddress] {
        do {
            return try lookUp(host: host, port: port)
        } catch {
            throw IOError(errno: error.errno, function: "getaddrinfo(\(host): \(error.reason))")
        }
    }

    /// `resolve(host:port:)` with a typed failure a client can tell apart from a socket error ("host not found").
    public static func lookUp(host: String, port: Int) throws(HostLookupError) -> [SocketAddress] {
        if let numeric = try? SocketAddress(ipAddress: host, port: port) { return [numeric] }
        var hints = addrinfo()
        hints.ai_socktype = CInt(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        guard status == 0, let first = list else {
            throw HostLookupError(
                host: host,
                reason: String(cString: gai_strerror(status)),
                isTemporary: status == EAI_AGAIN,
                errno: status == EAI_SYSTEM ? errno : EHOSTUNREACH
            )
        }
        defer { freeaddrinfo(list) }
        var addresses: [SocketAddress] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let info = cursor {
            if let address = SocketAddress(sockaddr: UnsafeRawPointer(info.pointee.ai_addr), overridingPort: port) {
                addresses.append(address)
            }
            cursor = info.pointee.ai_next
        }
        guard !addresses.isEmpty else {
            throw HostLookupError(host: host, reason: "no TCP address", isTemporary: false, errno: EHOSTUNREACH)
        }
        return addresses
    }

    /// Reads a `sockaddr` the kernel filled (getsockname, accept).
    init?(sockaddr raw: UnsafeRawPointer?, overridingPort: Int? = nil) {
        guard let raw else { return nil }
        let family = CInt(raw.load(as: sa_family_t.self))
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        switch family {
        case AF_INET:
            var v4 = raw.loadUnaligned(as: sockaddr_in.self)
            inet_ntop(AF_INET, &v4.sin_addr, &buffer, socklen_t(buffer.count))
            let port = overridingPort ?? Int(UInt16(bigEndian: v4.sin_port))
            v4.sin_port = in_port_t(UInt16(port).bigEndian)
            self.init(host: Self.text(buffer), port: port, family: AF_INET, raw: v4)
        case AF_INET6:
            var v6 = raw.loadUnaligned(as: sockaddr_in6.self)
            inet_ntop(AF_INET6, &v6.sin6_addr, &buffer, socklen_t(buffer.count))
            let port = overridingPort ?? Int(UInt16(bigEndian: v6.sin6_port))
            v6.sin6_port = in_port_t(UInt16(port).bigEndian)
            self.init(host: Self.text(buffer), port: port, family: AF_INET6, raw: v6)
        default:
            return nil
        }
    }

    private static func text(_ buffer: [CChar]) -> String {
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Calls `body` with the address as a `sockaddr` pointer and its length.
    func withSockAddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        storage.withUnsafeBytes { raw in
            body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count))
        }
    }

    public var description: String { family == AF_INET6 ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
