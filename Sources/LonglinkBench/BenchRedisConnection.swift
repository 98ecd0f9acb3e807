import Glibc
import LonglinkCore
import LonglinkLoop

/// What a `BenchRedisConnection` tells its owner. Loop-confined.
protocol BenchRedisConnectionDelegate: AnyObject {
    /// The TCP connection is up (commands sent before went out with it).
    func redisConnectionDidConnect(_ connection: BenchRedisConnection)
    /// A reply or a pub/sub push arrived; it borrows the receive buffer and is valid only during the call.
    func redisConnection(_ connection: BenchRedisConnection, didReceive reply: RedisReplyView)
    /// The connection closed: `error` is nil when `close()` was called, else why it ended.
    func redisConnectionDidClose(_ connection: BenchRedisConnection, error: String?)
}

/// The load generator's Redis connection, the counterpart of `BenchConnection`: plain TCP on a shared event loop,
/// commands staged as RESP bytes by the caller and written once per loop iteration, replies split in place by
/// `RedisReplyScanner` from the loop's `BenchReadScratch`, the clock read once per read (`receivedAt`). Both sides
/// of a Longlink/Redis comparison thus cost the load generator about the same per delivery.
final class BenchRedisConnection: SelectorHandler {
    private enum State { case connecting, open, closed }

    private unowned let context: LoopContext
    /// Held until the connection closes (no weak reference: see `BenchConnection`).
    private var delegate: (any BenchRedisConnectionDelegate)?
    private let fd: CInt
    private var registration: RegistrationID?
    /// After `readThroughRing`: its place in the loop's `BenchUringReader` (see `BenchConnection`).
    private var ringToken = BenchUringReader.Token.none
    private var state: State
    private let scratch: BenchReadScratch
    /// The bytes of an incomplete reply the last read ended in.
    private var leftover: [UInt8] = []
    private var outbound = OutboundQueue()
    private var staged: [UInt8] = []
    private var flushScheduled = false
    /// When the connect started (monotonic ns).
    let startedAt: UInt64
    /// When the last read returned (monotonic ns): the receive time of every reply it held.
    private(set) var receivedAt: UInt64 = 0

    /// Starts connecting to `address`.
    init(address: SocketAddress, context: LoopContext, delegate: any BenchRedisConnectionDelegate) throws(IOError) {
        self.context = context
        self.delegate = delegate
        self.scratch = BenchReadScratch.of(context)
        self.startedAt = MonotonicClock.nanoseconds()
        let (fd, connected) = try Socket.connect(to: address)
        self.fd = fd
        do {
            try Socket.enableNoDelay(fd)
            state = connected ? .open : .connecting
            registration = try context.register(fd: fd, interest: connected ? .read : .write, handler: self)
        } catch {
            Socket.close(fd)
            throw error
        }
        if connected { context.enqueue { self.didConnect() } }
    }

    deinit {
        if state != .closed { Socket.close(fd) }
    }

    /// Whether the connection is up.
    var isOpen: Bool { state == .open }

    /// Moves this connection's reads to the loop's io_uring `reader` (open only; returns whether it did).
    func readThroughRing(_ reader: BenchUringReader) -> Bool {
        guard state == .open, !ringToken.isAttached else { return false }
        if let registration { context.deregister(registration) }
        registration = nil
        ringToken = reader.attach(fd: fd, reader: self)
        if !outbound.isEmpty { setRingWriteInterest(true) }
        return true
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

    /// Lets `body` append RESP commands; they go out at the end of this loop iteration.
    func send(encoding body: (inout [UInt8]) -> Void) {
        guard state != .closed else { return }
        body(&staged)
        guard state == .open, !flushScheduled else { return }
        flushScheduled = true
        context.enqueue { self.flush() }
    }

    /// Closes the socket; the delegate hears `redisConnectionDidClose(error: nil)`.
    func close() { shutDown(nil) }

    func handleEvent(_ event: SelectorEvent) {
        if state == .connecting {
            do {
                guard try Socket.finishConnect(fd) else { return }
            } catch {
                return shutDown(BenchConnection.reason(error))
            }
            state = .open
            didConnect()
            return
        }
        // Through the ring, epoll only watches for room to write; the ring reports the socket's end.
        if !ringToken.isAttached && (event.contains(.read) || !event.isDisjoint(with: [.readEOF, .reset, .error])) { readAvailable() }
        if state == .open && event.contains(.write) { flush() }
    }

    private func didConnect() {
        guard state == .open else { return }
        flush()
        delegate?.redisConnectionDidConnect(self)
    }

    private func flush() {
        flushScheduled = false
        guard state == .open else { return }
        if !staged.isEmpty {
            let capacity = staged.count
            outbound.append(staged)
            staged = []
            staged.reserveCapacity(capacity)
        }
        while !outbound.isEmpty {
            do {
                guard case .processed = try outbound.write(to: fd) else { break }
            } catch {
                return shutDown("write: \(BenchConnection.reason(error))")
            }
        }
        if ringToken.isAttached { return setRingWriteInterest(!outbound.isEmpty) }
        guard let registration else { return }
        do {
            try context.reregister(registration, interest: outbound.isEmpty ? .read : [.read, .write])
        } catch {
            shutDown("epoll: \(error)")
        }
    }

    private func readAvailable() {
        for _ in 0..<8 {
            let kept = leftover.count
            if kept > 0 {
                scratch.reserve(2 * kept + 64 * 1024)
                leftover.withUnsafeBytes { scratch.bytes.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: kept) }
            }
            let buffer = scratch.bytes
            let room = buffer.count - kept
            let result: IOResult<Int>
            do {
                result = try Socket.read(fd, into: UnsafeMutableRawBufferPointer(start: buffer.baseAddress! + kept, count: room))
            } catch {
                return shutDown("read: \(BenchConnection.reason(error))")
            }
            guard case .processed(let count) = result else { return }
            guard count > 0 else { return shutDown("closed by server") }
            receivedAt = MonotonicClock.nanoseconds()
            let total = kept + count
            let consumed = handleReplies(UnsafeRawBufferPointer(start: buffer.baseAddress!, count: total))
            guard state != .closed else { return }
            if consumed < total {
                leftover = Array(UnsafeRawBufferPointer(start: buffer.baseAddress! + consumed, count: total - consumed))
            } else if kept > 0 {
                leftover = []
            }
            if count < room { break }
        }
    }

    /// Hands every whole reply at the start of `bytes` to the delegate and returns how many bytes they took.
    private func handleReplies(_ bytes: UnsafeRawBufferPointer) -> Int {
        let delegate = self.delegate
        var offset = 0
        do throws(BenchError) {
            while state != .closed, let (reply, end) = try RedisReplyScanner.next(bytes, at: offset) {
                offset = end
                delegate?.redisConnection(self, didReceive: reply)
            }
        } catch {
            shutDown(error.message)
        }
        return offset
    }

    private func shutDown(_ error: String?) {
        guard state != .closed else { return }
        state = .closed
        if let registration { context.deregister(registration) }
        registration = nil
        if ringToken.isAttached {
            context.attachment(BenchUringReader.self)?.detach(ringToken)
            ringToken = .none
        }
        Socket.close(fd)
        outbound.removeAll()
        staged = []
        leftover = []
        let delegate = self.delegate
        self.delegate = nil
        delegate?.redisConnectionDidClose(self, error: error)
    }
}

extension BenchRedisConnection: BenchRingReadable {
    /// Bytes the ring received: whole replies are handled in place, an incomplete last one is kept.
    func ringDidReceive(_ bytes: UnsafeRawBufferPointer, at now: UInt64) {
        guard state != .closed else { return }
        receivedAt = now
        let kept = leftover.count
        var replies = bytes
        if kept > 0 { replies = scratch.join(leftover, bytes) }
        let consumed = handleReplies(replies)
        guard state != .closed else { return }
        if consumed < replies.count {
            leftover = Array(UnsafeRawBufferPointer(rebasing: replies[consumed...]))
        } else if kept > 0 {
            leftover = []
        }
    }

    /// The ring's receive ended: the server closed, or the socket failed.
    func ringDidEnd(error: String?) {
        ringToken = .none
        shutDown(error ?? "closed by server")
    }
}

@available(*, unavailable)
extension BenchRedisConnection: Sendable {}

/// RESP command bytes for the load generator.
enum RedisCommandBytes {
    /// `*N` then each argument as a bulk string.
    static func command(_ arguments: [[UInt8]]) -> [UInt8] {
        var bytes = Array("*\(arguments.count)\r\n".utf8)
        for argument in arguments {
            bytes += Array("$\(argument.count)\r\n".utf8)
            bytes += argument
            bytes += [13, 10]
        }
        return bytes
    }

    /// `PUBLISH channel` up to the payload's `$N` line: what a publish of a `payloadSize`-byte message on `channel`
    /// starts with (the payload and its CRLF follow).
    static func publishPrefix(channel: [UInt8], payloadSize: Int) -> [UInt8] {
        var bytes = Array("*3\r\n$7\r\nPUBLISH\r\n$\(channel.count)\r\n".utf8)
        bytes += channel
        bytes += Array("\r\n$\(payloadSize)\r\n".utf8)
        return bytes
    }
}
