import Glibc
public import LonglinkCore
import LonglinkLoop
import LonglinkProtobuf

/// A hand-driven client over a blocking socket: sends exactly the bytes a test wants (good frames, garbage,
/// nothing at all) and reads frames with a deadline. The client library would be too polite for these tests.
/// Shared by the gateway, security and scale-out suites.
public final class FramePeer {
    /// The socket.
    public let fd: CInt
    private var inbound = ByteBuffer()
    private let codec = ProtobufFrameCodec()
    /// Whether the server closed the connection.
    public private(set) var eof = false
    private var closed = false

    /// Connects to 127.0.0.1:`port`, optionally with a small receive buffer (a reader that stalls sooner; set
    /// before the connect, see `LoopbackSocket.connect`).
    public init(port: Int, receiveBuffer: Int? = nil) throws {
        fd = try LoopbackSocket.connect(port: port, receiveBuffer: receiveBuffer)
    }

    deinit { close() }

    /// Closes the socket (also on deinit).
    public func close() {
        guard !closed else { return }
        closed = true
        Socket.close(fd)
    }

    /// A frame's bytes, length prefix included.
    public static func bytes(_ frame: ClientFrame) throws -> [UInt8] {
        var buffer = ByteBuffer()
        try ProtobufFrameCodec().encode(frame, into: &buffer)
        return buffer.readableArray
    }

    /// Sends a frame.
    public func send(_ frame: ClientFrame) throws { try sendRaw(Self.bytes(frame)) }

    /// Sends raw bytes.
    public func sendRaw(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw IOError(errno: errno, function: "send")
            }
            offset += n
        }
    }

    /// The next frame, or nil at EOF or when `timeout` passes.
    public func next(timeout: Duration = .seconds(5)) throws -> ServerFrame? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let frame = try codec.decodeNextServerFrame(from: &inbound, reader: FrameReader(maxFrameSize: 1 << 22)) {
                return frame
            }
            if eof { return nil }
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { return nil }
            let millis = Int32(remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000)
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, max(1, millis)) > 0 else { continue }
            let count = inbound.writeWithUnsafeMutableBytes(minimumWritableBytes: 65_536) { raw -> Int in
                max(0, Glibc.recv(fd, raw.baseAddress, raw.count, 0))
            }
            if count == 0 { eof = true }
        }
    }

    /// Reads frames until one matches (skipping others), or nil at EOF / timeout.
    public func next<T>(timeout: Duration = .seconds(5), _ match: (ServerFrame) -> T?) throws -> T? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard let frame = try next(timeout: deadline - ContinuousClock.now) else { return nil }
            if let value = match(frame) { return value }
        }
        return nil
    }

    /// The disconnect frame the server sends before closing, then checks the close (EOF) follows.
    public func disconnect(timeout: Duration = .seconds(5)) throws -> Disconnect? {
        let frame = try next(timeout: timeout) { if case .disconnect(let d) = $0 { d } else { nil } }
        return frame
    }

    /// Whether the server closed the connection within `timeout`.
    public func closedByServer(timeout: Duration = .seconds(5)) throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline && !eof {
            _ = try next(timeout: deadline - ContinuousClock.now)
        }
        return eof
    }

    /// Sends `connect` with `token` and returns `connected`, or nil.
    @discardableResult
    public func handshake(token: String = "") throws -> Connected? {
        try send(.connect(ConnectRequest(token: token, clientName: "raw-peer")))
        return try next { if case .connected(let c) = $0 { c } else { nil } }
    }

    /// Why `connected(port:token:)` gave up.
    public struct HandshakeRefused: Error, CustomStringConvertible {
        public let port: Int
        public var description: String { "no `connected` frame from 127.0.0.1:\(port) (refused, closed or timed out)" }
    }

    /// A peer connected to 127.0.0.1:`port` whose handshake with `token` was answered with `connected`; throws
    /// `HandshakeRefused` when it was not (the connect and handshake most tests start with).
    public static func connected(port: Int, token: String = "") throws -> FramePeer {
        let peer = try FramePeer(port: port)
        guard try peer.handshake(token: token) != nil else { throw HandshakeRefused(port: port) }
        return peer
    }

    /// An error frame for `requestID`.
    public func error(for requestID: UInt32, timeout: Duration = .seconds(5)) throws -> ErrorFrame? {
        try next(timeout: timeout) { frame in
            if case .error(let e) = frame, e.requestID == requestID { return e }
            if case .publishResult(let r) = frame, r.requestID == requestID, case .refused(let e) = r.outcome { return e }
            return nil
        }
    }

    /// Subscribes and returns the `subscribed` frame, or nil.
    public func subscribe(_ route: Route, requestID: UInt32 = 1, since: StreamPosition? = nil) throws -> Subscribed? {
        try send(.subscribe(SubscribeRequest(requestID: requestID, route: route.text, since: since)))
        return try next { if case .subscribed(let s) = $0 { s } else { nil } }
    }
}
