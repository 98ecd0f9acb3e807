public import LonglinkCore

/// A byte stream owned by one event loop: plain TCP (`PlainTransport`) or, later, TLS as a decorator over the
/// same fd. Redis's `ConnectionType` as a protocol. Loop-confined, deliberately not `Sendable`.
///
/// The connection drives it from its `SelectorHandler`: `handshake()` until `.processed`, then `read`/`write`.
/// The loop registration's interest is the union of what the connection wants (`.read`, plus `.write` while its
/// queue is non-empty) and the transport's own `interest`, because a TLS transport may need writability to finish a
/// read (renegotiation) or readability to finish a write (Redis's `tls.c` `updateSSLEvent`). Re-read `interest`
/// after every call.
public protocol Transport: AnyObject {
    /// The socket underneath (for registering with the loop).
    var fd: CInt { get }
    /// Readiness the transport itself waits for to make progress (a pending connect or TLS handshake step), on top
    /// of what the connection asks for. Empty for an established plain TCP stream.
    var interest: SelectorEvent { get }
    /// Advances the connection set-up (TCP connect completion, TLS handshake). `.wouldBlock` means "call again on
    /// the next readiness in `interest`"; `.processed` means ready for `read`/`write`.
    func handshake() throws(TransportError) -> IOResult<Void>
    /// Appends received bytes to `buffer` (one read per call; the caller applies its read budget).
    /// `.processed(0)` is end of stream.
    func read(into buffer: inout ByteBuffer) throws(TransportError) -> IOResult<Int>
    /// Whether the last `read` proved the socket empty (it returned fewer bytes than it asked for, on a stream
    /// that holds nothing in user space), so the caller can wait for the next readiness instead of reading again
    /// only to get `EAGAIN` (Redis reads once per readable event). False when unknown.
    var lastReadDrained: Bool { get }
    /// Writes from the front of `queue` and consumes what was written. Check `queue.isEmpty` afterwards.
    func write(_ queue: inout OutboundQueue) throws(TransportError) -> IOResult<Int>
    /// Closes the stream and its fd. Deregister from the loop first. Idempotent.
    func close()
    /// For a transport that carries frames in messages of its own protocol (WebSocket), what wraps each encoded
    /// frame before it is queued; nil for a byte stream (TCP, TLS), whose queue holds the frames themselves. A
    /// type, not a value: asked for on every delivery, a metatype is two plain words to pass around.
    var messageFramer: (any MessageFramer.Type)? { get }
    /// For a TLS transport whose handshake finished: whether it resumed an earlier session (a ticket, no
    /// certificate exchange) rather than making a full handshake. nil for transports without TLS.
    var tlsSessionResumed: Bool? { get }
    /// The socket a loop may send this transport's queued bytes to as they are, batched with other connections'
    /// sends (`SendRing`): an open plain stream's. nil when the transport writes its bytes itself (TLS encrypts
    /// them, WebSocket has its own) or is not open; such a connection's flush calls `write(_:)`.
    var batchableSocket: CInt? { get }
}

/// Wraps encoded frames in the messages of a message-based transport (WebSocket binary messages). The queue of a
/// connection on such a transport holds whole messages, so `write` passes them through, and a push wrapped once
/// is shared by every subscriber whose framer is the same type (framing is a pure function of the frame).
public protocol MessageFramer {
    /// One message carrying `frame` (one whole encoded frame).
    static func message(carrying frame: [UInt8]) -> [UInt8]
    /// The transport's own closing message for a numbered disconnect (WebSocket: a close frame with `code` and
    /// `reason`), queued after the disconnect frame.
    static func closeMessage(code: UInt32, reason: String) -> [UInt8]
}

/// Which side of a connection a transport is made for.
public enum TransportRole: Hashable, Sendable {
    /// A connection a listener accepted (server side).
    case accepted
    /// An outgoing connection whose non-blocking connect is in progress; `serverName` is for TLS SNI and checks.
    case connecting(serverName: String?)
}

/// Makes transports for fds on a loop thread; the factory itself is shared by all loops.
public protocol TransportFactory: Sendable {
    /// Wraps `fd` (already non-blocking); the transport owns it from now on.
    func makeTransport(fd: CInt, role: TransportRole) throws(TransportError) -> any Transport
    /// Whether the transports it makes encrypt (for inspection and metrics labels).
    var isEncrypted: Bool { get }
    /// The transport's name in metrics labels and the admin connection list: `tcp`, `tls`, `ws`, `wss`.
    var name: String { get }
    /// The bytes that refuse a connection at accept time (a limit, a drain) in the transport's own protocol,
    /// written in the clear before any handshake; nil sends the gateway's disconnect frame, empty sends nothing.
    func refusal(code: UInt32, reason: String, retryAfterMillis: UInt32) -> [UInt8]?
    /// The URL path clients open on a transport that has one (WebSocket: `/longlink`); nil for TCP and TLS.
    var path: String? { get }
    /// Like `makeTransport(fd:role:)` for an outgoing connection that keeps its TLS session in `sessionSlot`
    /// (one slot per simulated client of a load generator): it offers the session saved there and saves the new
    /// one. Transports without TLS ignore the slot.
    func makeTransport(fd: CInt, role: TransportRole, sessionSlot: Int) throws(TransportError) -> any Transport
}

extension Transport {
    /// Unknown: read again until `.wouldBlock`.
    public var lastReadDrained: Bool { false }
    /// A byte stream.
    public var messageFramer: (any MessageFramer.Type)? { nil }
    /// No TLS.
    public var tlsSessionResumed: Bool? { nil }
    /// The transport writes its own bytes.
    public var batchableSocket: CInt? { nil }
}

extension TransportFactory {
    public var isEncrypted: Bool { false }
    public var name: String { isEncrypted ? "tls" : "tcp" }
    public func refusal(code: UInt32, reason: String, retryAfterMillis: UInt32) -> [UInt8]? { nil }
    public var path: String? { nil }
    public func makeTransport(fd: CInt, role: TransportRole, sessionSlot: Int) throws(TransportError) -> any Transport {
        try makeTransport(fd: fd, role: role)
    }
}

/// Why a transport failed. A struct over a private enum (Hummingbird's style) so TLS can add kinds without
/// breaking callers: match on `kind` (`.io`, `.closed`, `.protocolFailure`).
public struct TransportError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The family of failure.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private enum Value: Hashable, Sendable { case io, closed, protocolFailure }
        private let value: Value

        /// A system call on the socket failed (`underlying` has the errno).
        public static let io = Kind(value: .io)
        /// The transport was used after `close()`.
        public static let closed = Kind(value: .closed)
        /// The stream's own protocol failed (e.g. a TLS alert or certificate check).
        public static let protocolFailure = Kind(value: .protocolFailure)

        public var description: String {
            switch value {
            case .io: "io"
            case .closed: "closed"
            case .protocolFailure: "protocolFailure"
            }
        }
    }

    /// The family of failure.
    public let kind: Kind
    /// Human-readable detail.
    public let reason: String
    /// The failed system call, for `.io`.
    public let underlying: IOError?
    /// For a failed TLS handshake: why, in terms a client can act on (certificate expired, unknown CA, ...).
    public let tlsCause: TLSFailureCause?

    /// Creates an error of `kind`.
    public init(kind: Kind, reason: String, underlying: IOError? = nil, tlsCause: TLSFailureCause? = nil) {
        self.kind = kind
        self.reason = reason
        self.underlying = underlying
        self.tlsCause = tlsCause
    }

    /// Wraps a failed system call.
    public static func io(_ error: IOError) -> TransportError {
        TransportError(kind: .io, reason: error.description, underlying: error)
    }

    /// The transport was already closed.
    public static let closed = TransportError(kind: .closed, reason: "transport is closed")

    public var description: String { "TransportError(\(kind)): \(reason)" }
}
