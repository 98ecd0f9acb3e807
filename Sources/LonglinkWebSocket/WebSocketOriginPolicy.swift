import Synchronization

/// Which browser pages may open a WebSocket (the `Origin` header, RFC 6455 §10.2). Clients that send no `Origin`
/// (apps, backends, tools) are always admitted: tokens authenticate them, the origin check only stops another
/// site's page from using a visitor's browser.
///
/// By default only same-origin pages are admitted: the origin's host and port are the `Host` the request was
/// sent to. Pages served on a trusted port of that same host are admitted too (the operations listener serves
/// the admin and example pages; its port is only known once it is bound, hence `trust(port:)`). An explicit
/// list admits exactly those origins (`https://app.example.com`), and `*` admits every origin.
public final class WebSocketOriginPolicy: Sendable {
    /// Allowed origins, lower-cased, or `*`.
    public let allowed: [String]
    private let trustedPorts = Mutex<[Int]>([])

    /// A policy admitting same-origin pages and `allowed` (exact origins, or `*` for all).
    public init(allowed: [String] = []) {
        self.allowed = allowed.map { $0.lowercased() }
    }

    /// Admits pages served on `port` of the host the request names (the admin page's listener).
    public func trust(port: Int) {
        trustedPorts.withLock { ports in if !ports.contains(port) { ports.append(port) } }
    }

    /// Whether a request with `origin` (nil: none sent) to `host` (its `Host` header) over a `secure` listener
    /// may upgrade.
    public func admits(origin: String?, host: String, secure: Bool) -> Bool {
        guard let origin else { return true }
        let lowered = origin.lowercased()
        if allowed.contains("*") || allowed.contains(lowered) { return true }
        guard let page = Self.authority(ofOrigin: lowered), let target = Self.authority(ofHost: host.lowercased(), secure: secure) else {
            return false
        }
        guard page.host == target.host else { return false }
        return page.port == target.port || trustedPorts.withLock { $0.contains(page.port) }
    }

    /// Host and port of `scheme://host[:port]` (the port defaults by scheme).
    static func authority(ofOrigin origin: String) -> (host: String, port: Int)? {
        guard let separator = origin.firstRange(of: "://") else { return nil }
        let scheme = origin[..<separator.lowerBound]
        let defaultPort: Int
        switch scheme {
        case "http", "ws": defaultPort = 80
        case "https", "wss": defaultPort = 443
        default: return nil
        }
        return authority(String(origin[separator.upperBound...]), defaultPort: defaultPort)
    }

    /// Host and port of a `Host` header value (the port defaults by the listener's security).
    static func authority(ofHost host: String, secure: Bool) -> (host: String, port: Int)? {
        authority(host, defaultPort: secure ? 443 : 80)
    }

    private static func authority(_ text: String, defaultPort: Int) -> (host: String, port: Int)? {
        guard !text.isEmpty, !text.contains("/"), !text.contains("@") else { return nil }
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            let host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            if rest.isEmpty { return (host, defaultPort) }
            guard rest.hasPrefix(":"), let port = Int(rest.dropFirst()), (1...65535).contains(port) else { return nil }
            return (host, port)
        }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        switch parts.count {
        case 1: return (text, defaultPort)
        case 2:
            guard !parts[0].isEmpty, let port = Int(parts[1]), (1...65535).contains(port) else { return nil }
            return (String(parts[0]), port)
        default: return nil
        }
    }
}
