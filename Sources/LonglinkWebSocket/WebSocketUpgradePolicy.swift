/// What an upgrade request must satisfy (RFC 6455 §4.2.1), and the answer to it: `101` with the accept hash,
/// or a refusal with the status the failed check calls for.
///
/// | check | refusal |
/// |---|---|
/// | method is `GET` | 405 with `Allow: GET` |
/// | path is the endpoint's (`/longlink`) | 404 |
/// | `Upgrade` has the `websocket` token | 426 with `Upgrade: websocket` |
/// | `Connection` has the `upgrade` token | 400 |
/// | `Sec-WebSocket-Version` is `13` (once) | 426 with `Sec-WebSocket-Version: 13` |
/// | `Sec-WebSocket-Key` is base64 of 16 bytes (once) | 400 |
/// | `Host` is present (once) | 400 |
/// | `Origin` (if sent) is admitted by the origin policy | 403 |
/// | `Sec-WebSocket-Protocol` offers `longlink.v1.protobuf` | 400 |
public struct WebSocketUpgradePolicy: Sendable {
    /// The sub-protocol naming Longlink's wire format: binary messages of varint-length-prefixed protobuf frames.
    public static let subprotocol = "longlink.v1.protobuf"

    /// The endpoint's path.
    public var path: String
    /// Which browser origins are admitted.
    public var origins: WebSocketOriginPolicy
    /// Whether the listener is TLS (`wss`): the default port of a `Host` without one.
    public var secure: Bool

    /// A policy for `path` with `origins`.
    public init(path: String = "/longlink", origins: WebSocketOriginPolicy = WebSocketOriginPolicy(), secure: Bool = false) {
        self.path = path
        self.origins = origins
        self.secure = secure
    }

    /// Checks `request` in the order of the table above; the first failed check decides the refusal.
    public func evaluate(_ request: WebSocketUpgradeRequest) -> Result<WebSocketAcceptance, WebSocketRefusal> {
        guard request.method == "GET" else {
            return .failure(WebSocketRefusal(status: 405, reason: "a WebSocket upgrade is a GET", headers: [field("Allow", "GET")]))
        }
        guard request.path == path[...] else {
            return .failure(WebSocketRefusal(status: 404, reason: "no WebSocket endpoint here; it is at \(path)"))
        }
        guard request.tokens("upgrade").contains("websocket") else {
            return .failure(
                WebSocketRefusal(
                    status: 426,
                    reason: "this endpoint speaks WebSocket only",
                    headers: [field("Upgrade", "websocket"), field("Connection", "Upgrade"), field("Sec-WebSocket-Version", "13")]
                )
            )
        }
        guard request.tokens("connection").contains("upgrade") else {
            return .failure(WebSocketRefusal(status: 400, reason: "the Connection header must hold the upgrade token"))
        }
        let versions = request.values("sec-websocket-version")
        guard versions == ["13"] else {
            return .failure(
                WebSocketRefusal(
                    status: 426,
                    reason: "unsupported WebSocket version \(versions.joined(separator: ",").prefix(16)); this server speaks 13",
                    headers: [field("Sec-WebSocket-Version", "13")]
                )
            )
        }
        let keys = request.values("sec-websocket-key")
        guard keys.count == 1, let key = keys.first, Base64.decode(Substring(key))?.count == 16 else {
            return .failure(WebSocketRefusal(status: 400, reason: "Sec-WebSocket-Key must be the base64 of 16 bytes, sent once"))
        }
        let hosts = request.values("host")
        guard hosts.count == 1, let host = hosts.first, !host.isEmpty else {
            return .failure(WebSocketRefusal(status: 400, reason: "the request needs one Host header"))
        }
        let origins = request.values("origin")
        guard origins.count <= 1, self.origins.admits(origin: origins.first, host: host, secure: secure) else {
            return .failure(WebSocketRefusal(status: 403, reason: "origin \(origins.first?.prefix(100) ?? "-") is not allowed"))
        }
        guard request.tokens("sec-websocket-protocol", lowercased: false).contains(Self.subprotocol) else {
            return .failure(WebSocketRefusal(status: 400, reason: "offer the sub-protocol \(Self.subprotocol) in Sec-WebSocket-Protocol"))
        }
        return .success(WebSocketAcceptance(accept: WebSocketAcceptance.accept(forKey: key), subprotocol: Self.subprotocol))
    }

    private func field(_ name: String, _ value: String) -> WebSocketUpgradeRequest.Field {
        WebSocketUpgradeRequest.Field(name: name, value: value)
    }
}
