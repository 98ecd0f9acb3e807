public import LonglinkCore

/// `Transport` over a plain TCP socket: `read(2)` into the buffer, gathered `sendmsg` from the queue.
///
/// For an outgoing connection made with `Socket.connect`, start in the connecting state: `interest` is `.write`
/// until `handshake()` sees the connect complete (or throws its error, e.g. `ECONNREFUSED`).
public final class PlainTransport: Transport {
    private enum State { case connecting, open, closed }

    // The small fields come first and share one 8-byte word: the object is 40 bytes (a 48-byte malloc block, not
    // 64), and every connection holds one (idle memory per connection is a budget, issue 19).

    /// The socket; owned (closed by `close()`).
    public let fd: CInt
    private var state: State
    /// Set by `read`: it returned fewer bytes than the buffer had room for, so the socket is empty for now.
    public private(set) var lastReadDrained = false
    /// Free space a read asks the buffer for when it has less than `minimumReadSize` free.
    public let readSize: Int
    /// Below this much free space the buffer grows by `readSize` before reading; above it, the read fills the space
    /// already there. Idle connections thus keep small buffers and busy ones grow (NIO's adaptive allocator, simply).
    public let minimumReadSize: Int

    /// Wraps a socket. `connecting: true` for a non-blocking connect still in progress.
    public init(fd: CInt, connecting: Bool = false, readSize: Int = 16 * 1024, minimumReadSize: Int = 1024) {
        self.fd = fd
        self.readSize = readSize
        self.minimumReadSize = Swift.min(minimumReadSize, readSize)
        self.state = connecting ? .connecting : .open
    }

    deinit { if state != .closed { Socket.close(fd) } }

    public var interest: SelectorEvent { state == .connecting ? .write : [] }

    public func handshake() throws(TransportError) -> IOResult<Void> {
        switch state {
        case .open: return .processed(())
        case .closed: throw .closed
        case .connecting:
            do {
                guard try Socket.finishConnect(fd) else { return .wouldBlock }
            } catch {
                throw .io(error)
            }
            state = .open
            return .processed(())
        }
    }

    public func read(into buffer: inout ByteBuffer) throws(TransportError) -> IOResult<Int> {
        guard state == .open else { throw .closed }
        var result: IOResult<Int> = .wouldBlock
        do {
            let wanted = buffer.writableBytes >= minimumReadSize ? minimumReadSize : readSize
            var drained = false
            try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: wanted) { raw throws(IOError) in
                result = try Socket.read(fd, into: raw)
                if case .processed(let count) = result {
                    drained = count < raw.count
                    return count
                }
                return 0
            }
            lastReadDrained = drained
        } catch {
            throw .io(error)
        }
        return result
    }

    public func write(_ queue: inout OutboundQueue) throws(TransportError) -> IOResult<Int> {
        guard state == .open else { throw .closed }
        do {
            return try queue.write(to: fd)
        } catch {
            throw .io(error)
        }
    }

    /// The socket, while open: its queued bytes go out as they are, so a loop may send them batched.
    public var batchableSocket: CInt? { state == .open ? fd : nil }

    public func close() {
        guard state != .closed else { return }
        state = .closed
        Socket.close(fd)
    }
}

/// Makes `PlainTransport`s (the `transport = tcp` toggle).
public struct PlainTransportFactory: TransportFactory {
    /// Bytes made writable in the buffer before each read.
    public var readSize: Int
    /// Sets `TCP_NODELAY` on every socket (small frames leave at once).
    public var noDelay: Bool

    /// Creates the factory.
    public init(readSize: Int = 16 * 1024, noDelay: Bool = true) {
        self.readSize = readSize
        self.noDelay = noDelay
    }

    public func makeTransport(fd: CInt, role: TransportRole) throws(TransportError) -> any Transport {
        if noDelay {
            do { try Socket.enableNoDelay(fd) } catch { throw .io(error) }
        }
        return switch role {
        case .accepted: PlainTransport(fd: fd, readSize: readSize)
        case .connecting: PlainTransport(fd: fd, connecting: true, readSize: readSize)
        }
    }
}

@available(*, unavailable)
extension PlainTransport: Sendable {}
