/// A `HOST:PORT` pair (`127.0.0.1:7070`, `[::1]:7070`, `localhost:0`).
public struct HostPort: Sendable, Hashable, CustomStringConvertible {
    /// Host name or address literal (without brackets).
    public var host: String
    /// TCP port (0 = any free port).
    public var port: UInt16

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
