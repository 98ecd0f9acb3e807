import Glibc
import LonglinkCore
import LonglinkLoop
import LonglinkProtobuf

/// A hand-driven client over a blocking socket: sends exactly the bytes a test wants (good frames, garbage,
/// nothing at all) and reads frames with a deadline. Used where the client library would be too polite.
final class RawPeer {
    let fd: CInt
    private var inbound = ByteBuffer()
    private let codec = ProtobufFrameCodec()
    private(set) var eof = false

    init(port: Int, receiveBuffer: Int? = nil) throws {
        let address = try SocketAddress(ipAddress: "127.0.0.1", port: port)
        let (fd, connected) = try Socket.connect(to: address)
        self.fd = fd
        if let receiveBuffer { try Socket.setBufferSizes(fd, receive: receiveBuffer) }
        if !connected {
            var pfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            _ = poll(&pfd, 1, 5_000)
            _ = try Socket.finishConnect(fd)
        }
        try Socket.setNonBlocking(fd, false)
    }

    deinit { Socket.close(fd) }

    /// Sends a frame.
    func send(_ frame: ClientFrame) throws {
        var buffer = ByteBuffer()
        try codec.encode(frame, into: &buffer)
        try sendRaw(buffer.readableArray)
    }

    /// Sends raw bytes.
    func sendRaw(_ bytes: [UInt8]) throws {
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
    func next(timeout: Duration = .seconds(5)) throws -> ServerFrame? {
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
                let n = Glibc.recv(fd, raw.baseAddress, raw.count, 0)
                return max(0, n)
            }
            if count == 0 { eof = true }
        }
    }

    /// Reads frames until one matches, skipping others (pings, pushes), or fails the wait.
    func next<T>(timeout: Duration = .seconds(5), _ match: (ServerFrame) -> T?) throws -> T? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard let frame = try next(timeout: deadline - ContinuousClock.now) else { return nil }
            if let value = match(frame) { return value }
        }
        return nil
    }

    /// Whether the server closed the connection within `timeout` (reading and dropping frames meanwhile).
    func closedByServer(timeout: Duration = .seconds(5)) throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try next(timeout: deadline - ContinuousClock.now) == nil && eof { return true }
        }
        return eof
    }

    /// Connects and returns the `connected` frame.
    @discardableResult
    func handshake(token: String = "") throws -> Connected? {
        try send(.connect(ConnectRequest(token: token, clientName: "raw-peer")))
        return try next { if case .connected(let c) = $0 { c } else { nil } }
    }

    /// Subscribes and returns the `subscribed` frame.
    func subscribe(_ route: Route, requestID: UInt32 = 1, since: StreamPosition? = nil) throws -> Subscribed? {
        try send(.subscribe(SubscribeRequest(requestID: requestID, route: route.text, since: since)))
        return try next { if case .subscribed(let s) = $0 { s } else { nil } }
    }
}

/// Reads a `disconnect` frame (skipping others).
func disconnectFrame(_ frame: ServerFrame) -> Disconnect? {
    if case .disconnect(let d) = frame { d } else { nil }
}

/// Reads a `push` frame (skipping others).
func pushFrame(_ frame: ServerFrame) -> Push? {
    if case .push(let p) = frame { p } else { nil }
}
