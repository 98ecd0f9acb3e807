public import LonglinkLoop

/// Makes `WebSocketTransport`s over the transports of another factory: `ws` over `PlainTransportFactory`,
/// `wss` over `TLSTransportFactory` (TLS first, then the upgrade inside it).
public struct WebSocketTransportFactory: TransportFactory {
    /// The byte stream underneath.
    public let inner: any TransportFactory
    /// The listener's settings.
    public let endpoint: WebSocketEndpoint

    /// A factory wrapping `inner`'s transports for `endpoint`.
    public init(inner: any TransportFactory, endpoint: WebSocketEndpoint) {
        self.inner = inner
        self.endpoint = endpoint
    }

    public var isEncrypted: Bool { inner.isEncrypted }

    /// `ws`, or `wss` over TLS.
    public var name: String { inner.isEncrypted ? "wss" : "ws" }

    /// The endpoint's path.
    public var path: String? { endpoint.policy.path }

    /// A `503 Service Unavailable` with `Retry-After` (whole seconds, rounded up) and the disconnect's number in
    /// `X-Longlink-Disconnect`; nothing over TLS, where no byte can be understood before the handshake.
    public func refusal(code: UInt32, reason: String, retryAfterMillis: UInt32) -> [UInt8]? {
        guard !inner.isEncrypted else { return [] }
        let seconds = (UInt64(retryAfterMillis) + 999) / 1000
        let refusal = WebSocketRefusal(
            status: 503,
            reason: reason,
            headers: [
                WebSocketUpgradeRequest.Field(name: "Retry-After", value: "\(seconds)"),
                WebSocketUpgradeRequest.Field(name: "X-Longlink-Disconnect", value: "\(code)"),
            ]
        )
        return refusal.responseBytes
    }

    public func makeTransport(fd: CInt, role: TransportRole) throws(TransportError) -> any Transport {
        guard case .accepted = role else {
            throw TransportError(kind: .protocolFailure, reason: "the WebSocket transport is server-side only")
        }
        return WebSocketTransport(inner: try inner.makeTransport(fd: fd, role: role), endpoint: endpoint)
    }
}
