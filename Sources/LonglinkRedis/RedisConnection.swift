public import LonglinkLoop
import Glibc
internal import CLonglinkHiredis

/// A non-blocking Redis connection driven by a Longlink event loop: pipelined commands with completions, and
/// pub/sub. Loop-confined: create it, call it and let it call you back on one loop thread.
///
/// Commands issued during one loop iteration are encoded into one buffer and written together at the end of the
/// iteration (one `sendmsg` for a whole pipeline), and replies are matched to completions in order. After
/// `subscribe`, messages go to `onMessage` with the channel and payload as borrowed bytes (valid only during the
/// call), so a subscriber receiving thousands of messages per second copies nothing it does not keep. Redis's own
/// rule applies: a connection with subscriptions may only send (P|S)SUBSCRIBE, (P|S)UNSUBSCRIBE and PING. Shard
/// channels (`shardSubscribe`, Redis Cluster) deliver through `onMessage` too, and slot moves through
/// `onShardChannelDropped`.
///
/// Parsing is hiredis's `redisReader`; socket I/O is Longlink's (`Socket`, `OutboundQueue`).
public final class RedisConnection: SelectorHandler {
    /// Called with each command's reply (an error reply arrives as `.failure(.server)`).
    public typealias Completion = (Result<RedisReply, RedisError>) -> Void
    /// Called with each pub/sub message: the channel and the payload, borrowed for the duration of the call.
    public typealias MessageHandler = (_ channel: UnsafeRawBufferPointer, _ payload: UnsafeRawBufferPointer) -> Void

    private struct Pending {
        /// Replies still expected (SUBSCRIBE answers once per channel).
        var remaining: Int
        var completion: Completion?
        /// Whether it is an SUNSUBSCRIBE, whose replies look like the `sunsubscribe` pushes of a slot migration.
        var shardUnsubscribe = false
    }

    private enum State { case connecting, open, closed }

    /// The server's address.
    public let address: SocketAddress
    private let context: LoopContext
    private let fd: CInt
    private var state: State
    private var registration: RegistrationID?
    private var outbound = OutboundQueue()
    private var encoded: [UInt8] = []
    private var flushScheduled = false
    private let reader = RedisReplyReader()
    private var pending: [Pending] = []
    private var pendingHead = 0
    /// Pub/sub messages go here once subscribed.
    public var onMessage: MessageHandler?
    /// Called with the channel of each `sunsubscribe` Redis pushed on its own: a Redis Cluster node drops the shard
    /// channels of a slot it no longer serves (a migration or failover), borrowed for the duration of the call.
    public var onShardChannelDropped: ((_ channel: UnsafeRawBufferPointer) -> Void)?
    /// Called once when the connection is established (commands may be sent before; they wait).
    public var onConnected: (() -> Void)?
    /// Called once when the connection closes: nil after `close()`, the error otherwise.
    public var onClose: ((RedisError?) -> Void)?

    /// Starts connecting to `address` on `context`'s loop.
    public init(address: SocketAddress, on context: LoopContext) throws(RedisError) {
        self.address = address
        self.context = context
        let connected: Bool
        do {
            (fd, connected) = try Socket.connect(to: address)
            try Socket.enableNoDelay(fd)
        } catch {
            throw .connect("\(address): \(error)")
        }
        state = connected ? .open : .connecting
        do {
            registration = try context.register(fd: fd, interest: connected ? .read : .write, handler: self)
        } catch {
            Socket.close(fd)
            throw .connect("\(address): \(error)")
        }
        if connected { context.enqueue { [weak self] in self?.onConnected?() } }
    }

    deinit {
        if state != .closed { Socket.close(fd) }
    }

    /// Whether the connection is closed.
    public var isClosed: Bool { state == .closed }
    /// Commands sent whose replies have not arrived yet.
    public var pendingReplies: Int { pending.count - pendingHead }

    /// Sends a command given as text arguments.
    public func send(_ arguments: [String], completion: Completion? = nil) {
        guard state != .closed else {
            completion?(.failure(.closed))
            return
        }
        RedisCommandEncoder.append(arguments, to: &encoded)
        expect(1, completion)
    }

    /// Sends a command with binary-safe arguments.
    public func send(bytes arguments: [[UInt8]], completion: Completion? = nil) {
        guard state != .closed else {
            completion?(.failure(.closed))
            return
        }
        RedisCommandEncoder.append(arguments, to: &encoded)
        expect(1, completion)
    }

    /// `PUBLISH channel message`; the completion gets the number of subscribers that received it.
    public func publish(channel: [UInt8], message: [UInt8], completion: Completion? = nil) {
        guard state != .closed else {
            completion?(.failure(.closed))
            return
        }
        RedisCommandEncoder.appendPublish(channel: channel, message: message, to: &encoded)
        expect(1, completion)
    }

    /// `SUBSCRIBE channel...`; the completion runs once Redis confirmed every channel, with the last confirmation.
    public func subscribe(_ channels: [String], completion: Completion? = nil) {
        precondition(!channels.isEmpty, "subscribe needs at least one channel")
        guard state != .closed else {
            completion?(.failure(.closed))
            return
        }
        RedisCommandEncoder.append(["SUBSCRIBE"] + channels, to: &encoded)
        expect(channels.count, completion)
    }

    /// `SSUBSCRIBE channel...` (Redis Cluster shard channels, all of one slot); the completion runs once Redis
    /// confirmed every channel, or with the error (e.g. `MOVED`) that refused them all.
    public func shardSubscribe(_ channels: [String], completion: Completion? = nil) {
        precondition(!channels.isEmpty, "shardSubscribe needs at least one channel")
        guard state != .closed else {
            completion?(.failure(.closed))
            return
        }
        RedisCommandEncoder.append(["SSUBSCRIBE"] + channels, to: &encoded)
        expect(channels.count, completion)
    }

    /// `SUNSUBSCRIBE channel...` (all of one slot); the completion runs once Redis confirmed every channel.
    public func shardUnsubscribe(_ channels: [String], completion: Completion? = nil) {
        precondition(!channels.isEmpty, "shardUnsubscribe needs at least one channel")
        guard state != .closed else {
            completion?(.failure(.closed))
            return
        }
        RedisCommandEncoder.append(["SUNSUBSCRIBE"] + channels, to: &encoded)
        expect(channels.count, completion, shardUnsubscribe: true)
    }

    /// `SPUBLISH channel message`; the completion gets the number of subscribers on the shard that received it.
    public func shardPublish(channel: [UInt8], message: [UInt8], completion: Completion? = nil) {
        guard state != .closed else {
            completion?(.failure(.closed))
            return
        }
        RedisCommandEncoder.append([Array("SPUBLISH".utf8), channel, message], to: &encoded)
        expect(1, completion)
    }

    /// `UNSUBSCRIBE channel...`; the completion runs once Redis confirmed every channel.
    public func unsubscribe(_ channels: [String], completion: Completion? = nil) {
        precondition(!channels.isEmpty, "unsubscribe needs at least one channel")
        guard state != .closed else {
            completion?(.failure(.closed))
            return
        }
        RedisCommandEncoder.append(["UNSUBSCRIBE"] + channels, to: &encoded)
        expect(channels.count, completion)
    }

    /// `PSUBSCRIBE pattern...` (messages arrive as `pmessage`, reported to `onMessage` with their channel);
    /// the completion runs once Redis confirmed every pattern.
    public func psubscribe(_ patterns: [String], completion: Completion? = nil) {
        precondition(!patterns.isEmpty, "psubscribe needs at least one pattern")
        guard state != .closed else {
            completion?(.failure(.closed))
            return
        }
        RedisCommandEncoder.append(["PSUBSCRIBE"] + patterns, to: &encoded)
        expect(patterns.count, completion)
    }

    /// `PUNSUBSCRIBE pattern...`; the completion runs once Redis confirmed every pattern.
    public func punsubscribe(_ patterns: [String], completion: Completion? = nil) {
        precondition(!patterns.isEmpty, "punsubscribe needs at least one pattern")
        guard state != .closed else {
            completion?(.failure(.closed))
            return
        }
        RedisCommandEncoder.append(["PUNSUBSCRIBE"] + patterns, to: &encoded)
        expect(patterns.count, completion)
    }

    /// Closes the connection; pending completions fail with `.closed`, `onClose` gets nil.
    public func close() { shutDown(nil) }

    // MARK: Loop side

    public func handleEvent(_ event: SelectorEvent) {
        if state == .connecting {
            guard event.contains(.write) || !event.isDisjoint(with: [.error, .reset]) else { return }
            do {
                guard try Socket.finishConnect(fd) else { return }
            } catch {
                return shutDown(.connect("\(address): \(error)"))
            }
            state = .open
            updateInterest()
            onConnected?()
            flush()
            return
        }
        if event.contains(.read) || !event.isDisjoint(with: [.readEOF, .reset, .error]) { readAvailable() }
        if state == .open && event.contains(.write) { flush() }
    }

    private func expect(_ replies: Int, _ completion: Completion?, shardUnsubscribe: Bool = false) {
        pending.append(Pending(remaining: replies, completion: completion, shardUnsubscribe: shardUnsubscribe))
        guard !flushScheduled else { return }
        flushScheduled = true
        context.enqueue { [weak self] in self?.flush() }
    }

    private func flush() {
        flushScheduled = false
        guard state == .open else { return }
        if !encoded.isEmpty {
            outbound.append(encoded)
            encoded = []
            encoded.reserveCapacity(256)
        }
        while !outbound.isEmpty {
            do {
                guard case .processed = try outbound.write(to: fd) else { break }
            } catch {
                return shutDown(.io("write to \(address): \(error)"))
            }
        }
        updateInterest()
    }

    private func updateInterest() {
        guard let registration, state == .open else { return }
        do {
            try context.reregister(registration, interest: outbound.isEmpty ? .read : [.read, .write])
        } catch {
            shutDown(.io("epoll: \(error)"))
        }
    }

    private func readAvailable() {
        let scratch = RedisReadScratch.of(context)
        for _ in 0..<16 {
            let result: IOResult<Int>
            do {
                result = try Socket.read(fd, into: scratch.bytes)
            } catch {
                return shutDown(.io("read from \(address): \(error)"))
            }
            guard case .processed(let count) = result else { return }
            guard count > 0 else { return shutDown(.io("\(address) closed the connection")) }
            do {
                try reader.feed(UnsafeRawBufferPointer(rebasing: scratch.bytes[..<count]))
                try reader.drain { reply in dispatch(reply) }
            } catch {
                return shutDown(error)
            }
            guard state == .open, count == scratch.bytes.count else { return }
        }
    }

    private func dispatch(_ reply: UnsafePointer<redisReply>) {
        if let onMessage, withPubSubMessage(reply, onMessage) { return }
        let answersHead = pendingHead < pending.count
        // A `sunsubscribe` answers an SUNSUBSCRIBE at the head; any other is a push (the slot left this node).
        if let dropped = shardUnsubscribeChannel(reply), !(answersHead && pending[pendingHead].shardUnsubscribe) {
            onShardChannelDropped?(dropped)
            return
        }
        guard answersHead else { return }  // an unsolicited reply (e.g. a late pong): ignore
        // An error answers the whole command at once (an SSUBSCRIBE refused with MOVED has one reply, not one per channel).
        pending[pendingHead].remaining = reply.pointee.type == REDIS_REPLY_ERROR ? 0 : pending[pendingHead].remaining - 1
        guard pending[pendingHead].remaining == 0 else { return }
        let completion = pending[pendingHead].completion
        pending[pendingHead].completion = nil
        pendingHead += 1
        if pendingHead == pending.count {
            pending.removeAll(keepingCapacity: true)
            pendingHead = 0
        } else if pendingHead >= 1024 && pendingHead * 2 >= pending.count {
            pending.removeFirst(pendingHead)
            pendingHead = 0
        }
        guard let completion else { return }
        let value = RedisReply(reply)
        if case .error(let message) = value { completion(.failure(.server(message))) } else { completion(.success(value)) }
    }

    private func shutDown(_ error: RedisError?) {
        guard state != .closed else { return }
        state = .closed
        if let registration { context.deregister(registration) }
        registration = nil
        Socket.close(fd)
        outbound.removeAll()
        let failed = pending[pendingHead...].compactMap(\.completion)
        pending.removeAll()
        pendingHead = 0
        for completion in failed { completion(.failure(.closed)) }
        let onClose = self.onClose
        self.onClose = nil
        onMessage = nil
        onShardChannelDropped = nil
        onConnected = nil
        onClose?(error)
    }
}

@available(*, unavailable)
extension RedisConnection: Sendable {}

/// One 64 KiB read buffer per loop, shared by every `RedisConnection` on it (reads never overlap on one thread).
final class RedisReadScratch {
    let bytes: UnsafeMutableRawBufferPointer

    private init() { bytes = .allocate(byteCount: 64 * 1024, alignment: 16) }
    deinit { bytes.deallocate() }

    static func of(_ context: LoopContext) -> RedisReadScratch {
        if let scratch = context.attachment(RedisReadScratch.self) { return scratch }
        let scratch = RedisReadScratch()
        context.attach(scratch)
        return scratch
    }
}

@available(*, unavailable)
extension RedisReadScratch: Sendable {}
