import LonglinkLoop

/// A connection's transport as the connection gauge and the admin list name it (one byte per connection).
enum TransportName: UInt8, Sendable {
    case tcp, tls, ws, wss

    /// The name of `factory`'s transports (`TransportFactory.name`; unknown names fall back to tcp or tls).
    init(_ factory: any TransportFactory) {
        switch factory.name {
        case "ws": self = .ws
        case "wss": self = .wss
        default: self = factory.isEncrypted ? .tls : .tcp
        }
    }

    /// The label text.
    var text: String {
        switch self {
        case .tcp: "tcp"
        case .tls: "tls"
        case .ws: "ws"
        case .wss: "wss"
        }
    }
}
