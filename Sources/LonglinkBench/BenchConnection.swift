import Glibc
import LonglinkCore
import LonglinkLoop
import LonglinkProtobuf

/// What a `BenchConnection` tells its owner. Loop-confined; every call comes on the connection's loop.
protocol BenchConnectionDelegate: AnyObject {
    /// The `connected` frame arrived.
    func connectionDidConnect(_ connection: BenchConnection)
    /// A frame other than `connected`, `ping`, `pong` and `push` arrived.
    func connection(_ connection: BenchConnection, didReceive frame: ServerFrame)
    /// A push arrived; `push` borrows the receive buffer and is valid only during the call.
    func connection(_ connection: BenchConnection, didReceivePush push: PushView)
    /// A publish was accepted (read in place; a refusal arrives as a decoded frame).
    func connection(_ connection: BenchConnection, didReceivePublishResult result: PublishResultView)
    /// The connection closed: `error` is nil when `close()` was called, else why it ended.
    func connectionDidClose(_ connection: BenchConnection, error: String?)
}

extension BenchConnectionDelegate {
    /// Ignores pushes (connections that only connect or publish).
    func connection(_ connection: BenchConnection, didReceivePush push: PushView) {}
    /// Ignores publish results (connections that do not publish).
    func connection(_ connection: BenchConnection, didReceivePublishResult result: PublishResultView) {}
}

/// A lean Longlink client connection for load generation: one fd, one outbound queue, frames through
/// `ProtobufFrameCodec`, on a shared event loop. Thousands of them share one thread, where a `LonglinkClient` would
/// bring its own. It answers server pings and reports everything else to its delegate.
///
/// The receive path is the load generator's hot path (one read per delivery on many routes): a plain-TCP read goes
/// into the loop's `BenchReadScratch`, whole frames are handled in place (pushes and accepted publish results are
/// scanned, not decoded), and only the bytes of an incomplete last frame are kept for the next read. The clock is
/// read once per read (`receivedAt`), not once per frame. The send path stages pre-encoded frames of one loop
/// iteration in one array (`send(encoding:)`), queued as one chunk when the iteration flushes.
///
/// With `--tls` the bytes go through a `Transport` from the endpoint's factory (`TLSTransportFactory`: TCP connect
/// and TLS handshake in `handshake()`, then encrypted reads and writes, its own readiness wishes in `interest`).
/// Plain TCP skips the seam and uses the fd directly: no transport object per connection, because the client's
/// memory per idle connection is one of the figures (the `transport` slot costs 16 bytes inline, nothing more).
final class BenchConnection: SelectorHandler {
    private enum State { case connecting, handshaking, open, closed }

    /// The owner's index for this connection (subscriber number, ...).
    let index: Int
    private unowned let context: LoopContext
    /// Held until the connection closes (a weak reference would give every delegate a side table, and every retain
    /// of it on the delivery path the slow, out-of-line reference count).
    private var delegate: (any BenchConnectionDelegate)?
    private let fd: CInt
    /// With TLS: the transport owning `fd`. nil: plain TCP on `fd`.
    private var transport: (any Transport)?
    private var registration: RegistrationID?
    /// Plain TCP after `readThroughRing`: its place in the loop's `BenchUringReader`, which reads the socket
    /// instead of epoll (the fd is registered with epoll again only while a write waits for room).
    private var ringToken = BenchUringReader.Token.none
    private var state: State
    /// The loop's receive buffer (plain TCP).
    private let scratch: BenchReadScratch
    /// Plain TCP: the bytes of an incomplete frame the last read ended in; `leftoverNeed` is that frame's size.
    private var leftover: [UInt8] = []
    private var leftoverNeed = 0
    /// TLS: the decrypted bytes not yet handled.
    private var inbound = ByteBuffer()
    private var outbound = OutboundQueue()
    /// Frames appended by `send(encoding:)` since the last flush.
    private var staged: [UInt8] = []
    private var flushScheduled = false
    /// When the last read returned (monotonic ns): the receive time of every frame it held.
    private(set) var receivedAt: UInt64 = 0
    /// When the connect started (monotonic ns), for connect latency.
    let startedAt: UInt64
    private static let codec = ProtobufFrameCodec()
    /// The largest frame accepted (the gateway's default `max_frame_size`).
    private static var maxFrameSize: Int { 4 << 20 }
    private static let pong: [UInt8] = encode(.pong)

    /// Starts connecting to `endpoint` (over TLS when it has a factory), then sends `connectFrame` (pre-encoded,
    /// shared by all connections). `index` also picks the source address.
    init(
        index: Int,
        endpoint: BenchEndpoint,
        connectFrame: [UInt8],
        context: LoopContext,
        delegate: any BenchConnectionDelegate
    ) throws(TransportError) {
        self.index = index
        self.context = context
        self.delegate = delegate
        self.startedAt = MonotonicClock.nanoseconds()
        self.scratch = BenchReadScratch.of(context)
        let fd: CInt
        let connected: Bool
        do {
            (fd, connected) = try endpoint.connect(index: index)
        } catch {
            throw .io(error)
        }
        self.fd = fd
        if let factory = endpoint.transport {
            // Once made, the transport owns the fd (and finishes the TCP connect itself in `handshake()`).
            let transport: any Transport
            do {
                // The connection's index is its TLS session slot: a reconnect of the same simulated client
                // offers the ticket its previous connection got (resumption), as a phone would.
                transport = try factory.makeTransport(fd: fd, role: .connecting(serverName: nil), sessionSlot: index)
            } catch {
                Socket.close(fd)
                throw error
            }
            self.transport = transport
            state = .connecting
            do {
                registration = try context.register(fd: fd, interest: transport.interest, handler: self)
            } catch {
                transport.close()
                throw .io(error)
            }
        } else {
            do {
                try Socket.enableNoDelay(fd)
                state = connected ? .handshaking : .connecting
                registration = try context.register(fd: fd, interest: connected ? .read : .write, handler: self)
            } catch {
                Socket.close(fd)
                throw .io(error)
            }
        }
        outbound.append(connectFrame)
        if state == .handshaking { scheduleFlush() }
    }

    deinit {
        if state != .closed && transport == nil { Socket.close(fd) }  // a transport closes its fd in its own deinit
    }

    /// Moves this connection's reads to the loop's io_uring `reader` (plain TCP and open only; returns whether it
    /// did). Bytes already read stay in order: the ring receives only what the socket holds after this iteration.
    func readThroughRing(_ reader: BenchUringReader) -> Bool {
        guard transport == nil, state == .open, !ringToken.isAttached else { return false }
        if let registration { context.deregister(registration) }
        registration = nil
        ringToken = reader.attach(fd: fd, reader: self)
        if !outbound.isEmpty { setInterest([.read, .write]) }
        return true
    }

    /// Whether the loop's io_uring reads this connection.
    var readsThroughRing: Bool { ringToken.isAttached }

    /// Whether the handshake finished and the connection is usable.
    var isOpen: Bool { state == .open }
    /// Whether the connection is closed.
    var isClosed: Bool { state == .closed }
    /// With TLS, once open: whether the handshake resumed a saved session; nil for plain TCP.
    var tlsSessionResumed: Bool? { transport?.tlsSessionResumed }

    /// Encodes one client frame (outside the hot path; hot senders pre-encode).
    static func encode(_ frame: ClientFrame) -> [UInt8] {
        var buffer = ByteBuffer(capacity: 64)
        do {
            try codec.encode(frame, into: &buffer)
        } catch {
            preconditionFailure("benchmark frames encode: \(error)")
        }
        return buffer.readableArray
    }

    /// Queues a frame; written at the end of this loop iteration together with anything else queued.
    func send(_ frame: ClientFrame) { send(bytes: Self.encode(frame)) }

    /// Queues pre-encoded frame bytes (shared, not copied).
    func send(bytes: [UInt8]) {
        guard state != .closed else { return }
        stageToOutbound()
        outbound.append(bytes)
        if state == .open || state == .handshaking { scheduleFlush() }
    }

    /// Lets `body` append encoded frames to this iteration's staging array (after anything staged before); they go
    /// out with the next flush, in order with `send(bytes:)`.
    func send(encoding body: (inout [UInt8]) -> Void) {
        guard state != .closed else { return }
        body(&staged)
        if state == .open || state == .handshaking { scheduleFlush() }
    }

    /// Moves the staged frames into the outbound queue as one chunk.
    private func stageToOutbound() {
        guard !staged.isEmpty else { return }
        let capacity = staged.count
        outbound.append(staged)
        staged = []
        staged.reserveCapacity(capacity)
    }

    /// Closes the socket (the server sees EOF); the delegate hears `connectionDidClose(error: nil)`.
    func close() { shutDown(nil) }

    /// Closes with a TCP reset (SO_LINGER 0), as a lost network would look to the server after its timeout.
    func abort() {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        shutDown(nil)
    }

    func handleEvent(_ event: SelectorEvent) {
        if state == .connecting {
            if let transport {
                do throws(TransportError) {
                    guard case .processed = try transport.handshake() else { return setInterest(transport.interest) }
                } catch {
                    return shutDown(Self.reason(error, during: "connect"))
                }
            } else {
                do {
                    guard try Socket.finishConnect(fd) else { return }
                } catch {
                    return shutDown("connect: \(Self.reason(error))")
                }
            }
            state = .handshaking
            flush()
            return
        }
        if let transport {
            // TLS: either readiness may unblock either direction (a read that waited for writability, a write
            // that waited for readability), so try both; a read with nothing to decrypt costs one SSL_read.
            readAvailable(from: transport)
            if state != .closed { flush() }
            return
        }
        // Through the ring, epoll only watches for room to write; the ring reports the socket's end.
        if !ringToken.isAttached && (event.contains(.read) || !event.isDisjoint(with: [.readEOF, .reset, .error])) { readAvailable() }
        if state != .closed && event.contains(.write) { flush() }
    }

    private func scheduleFlush() {
        guard !flushScheduled else { return }
        flushScheduled = true
        context.enqueue { self.flush() }  // kept until the job runs; `flush` does nothing once closed
    }

    private func flush() {
        flushScheduled = false
        guard state == .open || state == .handshaking else { return }
        stageToOutbound()
        var interest: SelectorEvent = .read
        if let transport {
            do throws(TransportError) {
                while !outbound.isEmpty, case .processed = try transport.write(&outbound) {}
            } catch {
                return shutDown(Self.reason(error, during: "write"))
            }
            // A TLS write may wait for readability, a TLS read for writability (renegotiation, key updates).
            interest.formUnion(transport.interest)
        } else {
            while !outbound.isEmpty {
                do {
                    guard case .processed = try outbound.write(to: fd) else { break }
                } catch {
                    return shutDown("write: \(Self.reason(error))")
                }
            }
        }
        if !outbound.isEmpty { interest.formUnion(.write) }
        setInterest(interest)
    }

    private func setInterest(_ interest: SelectorEvent) {
        if ringToken.isAttached { return setRingWriteInterest(interest.contains(.write)) }
        guard let registration else { return }
        do {
            try context.reregister(registration, interest: interest)
        } catch {
            shutDown("epoll: \(error)")
        }
    }

    /// Through the ring: registered with epoll for writability only while a write waits for room.
    private func setRingWriteInterest(_ wantsWrite: Bool) {
        if wantsWrite && registration == nil {
            do {
                registration = try context.register(fd: fd, interest: .write, handler: self)
            } catch {
                shutDown("epoll: \(error)")
            }
        } else if !wantsWrite, let registration {
            context.deregister(registration)
            self.registration = nil
        }
    }

    private func readAvailable() {
        for _ in 0..<8 {
            // An incomplete frame from the last read goes first (copied back: usually a few hundred bytes).
            let kept = leftover.count
            if kept > 0 {
                scratch.reserve(max(leftoverNeed, kept) + 64 * 1024)
                leftover.withUnsafeBytes { scratch.bytes.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: kept) }
            }
            let buffer = scratch.bytes
            let room = buffer.count - kept
            let result: IOResult<Int>
            do {
                result = try Socket.read(fd, into: UnsafeMutableRawBufferPointer(start: buffer.baseAddress! + kept, count: room))
            } catch {
                return shutDown("read: \(Self.reason(error))")
            }
            guard case .processed(let count) = result else { return }
            guard count > 0 else { return shutDown("closed by server") }
            receivedAt = MonotonicClock.nanoseconds()
            let total = kept + count
            let consumed = handleFrames(UnsafeRawBufferPointer(start: buffer.baseAddress!, count: total))
            guard state != .closed else { return }
            if consumed < total {
                let tail = UnsafeRawBufferPointer(start: buffer.baseAddress! + consumed, count: total - consumed)
                leftover = Array(tail)
                leftoverNeed = Self.frameSize(tail) ?? 0
            } else if kept > 0 {
                leftover = []
                leftoverNeed = 0
            }
            // A short read emptied the socket; the next bytes fire epoll again (no read just for EAGAIN).
            if count < room { break }
        }
    }

    /// `readAvailable` over a transport (TLS): it decrypts into `inbound`, draining what OpenSSL already holds.
    private func readAvailable(from transport: any Transport) {
        for _ in 0..<8 {
            let result: IOResult<Int>
            do throws(TransportError) {
                result = try transport.read(into: &inbound)
            } catch {
                return shutDown(Self.reason(error, during: "read"))
            }
            guard case .processed(let count) = result else { break }
            guard count > 0 else { return shutDown("closed by server") }
            receivedAt = MonotonicClock.nanoseconds()
            let consumed = inbound.withReadableBytes { bytes in handleFrames(bytes) }
            inbound.moveReaderIndex(forwardBy: consumed)
            guard state != .closed else { return }
        }
        if inbound.readableBytes == 0 { inbound.clear() } else { inbound.discardReadBytes() }
        if inbound.capacity > 64 * 1024 && inbound.readableBytes == 0 { inbound.shrink(to: 512) }
    }

    /// Handles the whole frames at the start of `bytes` in arrival order and returns how many bytes they took.
    /// Pushes and accepted publish results are read in place (see `PushView`); other frames are decoded by the
    /// codec (a `subscribed` with missed records must still come before the pushes that follow it). Handlers never
    /// touch the bytes after the call. A malformed or oversized frame closes the connection.
    private func handleFrames(_ bytes: UnsafeRawBufferPointer) -> Int {
        var failure: FrameError?
        var offset = 0
        let delegate = self.delegate
        while state != .closed {
            guard let (length, prefix) = Self.prefix(bytes, at: offset) else { break }
            if length == 0 || length > Self.maxFrameSize {
                failure = length == 0 ? .empty : .oversized(length: UInt64(length), limit: Self.maxFrameSize)
                break
            }
            guard bytes.count - offset - prefix >= length else { break }
            let body = UnsafeRawBufferPointer(start: bytes.baseAddress! + offset + prefix, count: length)
            offset += prefix + length
            if let delegate {
                let key = body[0]
                if key == PushView.frameKey, let push = PushView.scan(body) {
                    delegate.connection(self, didReceivePush: push)
                    continue
                }
                if key == PublishResultView.frameKey, let result = PublishResultView.scan(body) {
                    delegate.connection(self, didReceivePublishResult: result)
                    continue
                }
            }
            do throws(FrameError) {
                handle(try Self.codec.decodeServerFrame(body: body))
            } catch {
                failure = error
                break
            }
        }
        if let failure { shutDown("bad frame: \(failure)") }
        return offset
    }

    /// The whole size (prefix and body) of the frame `bytes` start with, nil while its prefix is incomplete.
    private static func frameSize(_ bytes: UnsafeRawBufferPointer) -> Int? {
        guard let (length, prefix) = prefix(bytes, at: 0), length <= maxFrameSize else { return nil }
        return prefix + length
    }

    /// The length prefix at `offset`: body length and prefix size, nil while incomplete (or longer than 10 bytes,
    /// reported as an oversized length).
    private static func prefix(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> (Int, Int)? {
        var value = 0
        var shift = 0
        var index = offset
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            guard shift < 63 else { return (Int.max, index - offset) }
            value |= Int(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return (value, index - offset) }
            shift += 7
        }
        return nil
    }

    private func handle(_ frame: ServerFrame) {
        switch frame {
        case .ping:
            send(bytes: Self.pong)
        case .pong:
            break
        case .connected:
            state = .open
            scheduleFlush()
            delegate?.connectionDidConnect(self)
        case .disconnect(let disconnect):
            shutDown("disconnected: \(disconnect.code)")
        default:
            delegate?.connection(self, didReceive: frame)
        }
    }

    private func shutDown(_ error: String?) {
        guard state != .closed else { return }
        state = .closed
        if let registration { context.deregister(registration) }
        registration = nil
        if let transport {
            transport.close()
            self.transport = nil
        } else {
            Socket.close(fd)
        }
        if ringToken.isAttached {
            context.attachment(BenchUringReader.self)?.detach(ringToken)
            ringToken = .none
        }
        outbound.removeAll()
        staged = []
        leftover = []
        let delegate = self.delegate
        self.delegate = nil
        delegate?.connectionDidClose(self, error: error)
    }

    /// A short, countable reason: the errno name without addresses.
    static func reason(_ error: IOError) -> String {
        "\(error.function): \(error.reason)"
    }

    /// A short, countable reason for a transport failure: `tls: …` for a TLS protocol failure (bad certificate,
    /// alert), `STEP: function: errno text` for a system call.
    static func reason(_ error: TransportError, during step: String) -> String {
        if let underlying = error.underlying {
            return underlying.function == step ? reason(underlying) : "\(step): \(reason(underlying))"
        }
        return error.kind == .protocolFailure ? "tls: \(error.reason)" : "\(step): \(error.reason)"
    }
}

extension BenchConnection: BenchRingReadable {
    /// Bytes the ring received: whole frames are handled in place in the ring's buffer, an incomplete last frame
    /// is kept (as after a `read`); with a kept frame the two are joined in the loop's scratch first.
    func ringDidReceive(_ bytes: UnsafeRawBufferPointer, at now: UInt64) {
        guard state != .closed else { return }
        receivedAt = now
        let kept = leftover.count
        var frames = bytes
        if kept > 0 { frames = scratch.join(leftover, bytes) }
        let consumed = handleFrames(frames)
        guard state != .closed else { return }
        if consumed < frames.count {
            let tail = UnsafeRawBufferPointer(rebasing: frames[consumed...])
            leftover = Array(tail)
            leftoverNeed = Self.frameSize(tail) ?? 0
        } else if kept > 0 {
            leftover = []
            leftoverNeed = 0
        }
    }

    /// The ring's receive ended: the server closed, or the socket failed.
    func ringDidEnd(error: String?) {
        ringToken = .none
        shutDown(error ?? "closed by server")
    }
}

@available(*, unavailable)
extension BenchConnection: Sendable {}
