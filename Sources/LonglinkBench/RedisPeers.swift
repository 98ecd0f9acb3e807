import Glibc
import LonglinkCore
import LonglinkLoop

/// One benchmark subscriber on Redis pub/sub: `SUBSCRIBE` to its channel, then the same sequence and latency
/// checks as `LonglinkSubscriber`. Loop-confined.
final class RedisSubscriber: BenchSubscriber, BenchRedisConnectionDelegate {
    let index: Int
    private var connection: BenchRedisConnection?
    private let channel: [UInt8]
    private let counters: BenchCounters
    private let recorder: LoopRecorder
    private var lastSequence: UInt64 = 0
    private var closing = false
    /// Whether SUBSCRIBE was confirmed.
    private(set) var isSubscribed = false
    /// Called when SUBSCRIBE is confirmed.
    var onSubscribed: ((RedisSubscriber) -> Void)?
    /// Called when the connection ends without `close()`.
    var onLost: ((RedisSubscriber) -> Void)?

    init(index: Int, channel: String, address: SocketAddress, context: LoopContext, counters: BenchCounters) {
        self.index = index
        self.channel = Array(channel.utf8)
        self.counters = counters
        self.recorder = context.attachment(LoopRecorder.self)!
        do {
            connection = try BenchRedisConnection(address: address, context: context, delegate: self)
        } catch {
            connection = nil
            counters.fail("connect: \(BenchConnection.reason(error))")
            return
        }
        let subscribe = RedisCommandBytes.command([Array("SUBSCRIBE".utf8), self.channel])
        connection?.send { $0 += subscribe }
    }

    func close() {
        closing = true
        connection?.close()
    }

    /// Moves the connection's reads to the loop's io_uring; returns whether it did.
    @discardableResult
    func readThroughRing(_ reader: BenchUringReader) -> Bool { connection?.readThroughRing(reader) ?? false }

    /// Whether the connection could not even start.
    var failedToStart: Bool { connection == nil && !closing }

    func redisConnectionDidConnect(_ connection: BenchRedisConnection) {
        counters.connected.add(1)
        recorder.connect.record(MonotonicClock.nanoseconds() &- connection.startedAt)
    }

    func redisConnection(_ connection: BenchRedisConnection, didReceive reply: RedisReplyView) {
        switch reply {
        case .push(let kind, _, let payload?, _) where kind.count == 7 && kind[0] == UInt8(ascii: "m"):
            // `message CHANNEL PAYLOAD` (a subscriber of one channel gets only its own).
            deliver(payload, at: connection.receivedAt)
        case .push(let kind, let channel, nil, _) where Self.equal(kind, "subscribe".utf8) && Self.equal(channel, self.channel):
            guard !isSubscribed else { return }
            isSubscribed = true
            onSubscribed?(self)
        case .error(let message):
            counters.fail("subscribe: \(String(decoding: message, as: UTF8.self))")
        default:
            break
        }
    }

    func redisConnectionDidClose(_ connection: BenchRedisConnection, error: String?) {
        guard !closing else { return }
        counters.fail("redis: \(error ?? "closed")")
        onLost?(self)
    }

    private func deliver(_ payload: UnsafeRawBufferPointer, at now: UInt64) {
        guard let stamp = BenchPayload.read(payload) else { return }
        let last = lastSequence
        if stamp.sequence <= last {
            counters.duplicates.add(1)
            return
        }
        if stamp.sequence > last + 1 && last > 0 { counters.gaps.add(Int(stamp.sequence - last - 1)) }
        lastSequence = stamp.sequence
        recorder.recordDelivery(sentAt: stamp.timestamp, now: now, counters: counters)
    }

    static func equal(_ bytes: UnsafeRawBufferPointer, _ expected: some Collection<UInt8>) -> Bool {
        bytes.count == expected.count && zip(bytes, expected).allSatisfy { $0 == $1 }
    }
}

@available(*, unavailable)
extension RedisSubscriber: Sendable {}

/// Publishes benchmark messages with pipelined `PUBLISH`es on one connection; replies come back in order, each
/// answering the oldest publish in flight. Each command is written into the staging array from a prefix prepared
/// once per channel. Loop-confined.
final class RedisPublishSink: PublishSink, BenchRedisConnectionDelegate {
    private var connection: BenchRedisConnection?
    private let counters: BenchCounters
    /// Every channel's `PUBLISH` prefix for this workload's payload size, back to back (see `RedisCommandBytes`).
    private var prefixes: [UInt8] = []
    private var prefixStarts: [Int] = [0]
    private let channels: [[UInt8]]
    private var prefixPayloadSize = -1
    /// The routes of the publishes in flight, oldest first from `inFlightHead`.
    private var inFlight: [Int] = []
    private var inFlightHead = 0
    private var ready = false
    /// The publisher it answers (held until `close()`: no weak reference on the delivery path).
    var publisher: PacedPublisher?
    /// Called when the connection is up.
    var onReady: (() -> Void)?

    init(names: RouteNames, routes: Int, address: SocketAddress, context: LoopContext, counters: BenchCounters) {
        self.counters = counters
        channels = (0..<routes).map { Array(names.channel($0).utf8) }
        do {
            connection = try BenchRedisConnection(address: address, context: context, delegate: self)
        } catch {
            connection = nil
            counters.fail("publisher connect: \(BenchConnection.reason(error))")
        }
    }

    var isReady: Bool { ready && (connection?.isOpen ?? false) }

    /// Moves the connection's reads (the PUBLISH replies) to the loop's io_uring; returns whether it did.
    @discardableResult
    func readThroughRing(_ reader: BenchUringReader) -> Bool { connection?.readThroughRing(reader) ?? false }

    func close() {
        publisher = nil
        onReady = nil
        connection?.close()
    }

    func publish(route: Int, stamp: (timestamp: UInt64, sequence: UInt64), payloadSize: Int) {
        let size = max(payloadSize, BenchPayload.minimumSize)
        if size != prefixPayloadSize { preparePrefixes(payloadSize: size) }
        inFlight.append(route)
        let start = prefixStarts[route]
        let end = prefixStarts[route + 1]
        connection?.send { bytes in
            prefixes.withUnsafeBytes { bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: $0[start..<end])) }
            // The payload and its CRLF, written on the stack and appended in one copy.
            withUnsafeTemporaryAllocation(byteCount: size + 2, alignment: 8) { raw in
                var out = RawWriter(raw.baseAddress!)
                out.stamp(stamp, size: size)
                out.byte(13)
                out.byte(10)
                bytes.append(contentsOf: UnsafeRawBufferPointer(raw))
            }
        }
    }

    private func preparePrefixes(payloadSize: Int) {
        prefixPayloadSize = payloadSize
        prefixes = []
        prefixStarts = [0]
        for channel in channels {
            prefixes += RedisCommandBytes.publishPrefix(channel: channel, payloadSize: payloadSize)
            prefixStarts.append(prefixes.count)
        }
    }

    func redisConnectionDidConnect(_ connection: BenchRedisConnection) {
        ready = true
        onReady?()
    }

    func redisConnection(_ connection: BenchRedisConnection, didReceive reply: RedisReplyView) {
        guard inFlightHead < inFlight.count else { return }  // an unsolicited reply: ignore
        let route = inFlight[inFlightHead]
        inFlightHead += 1
        if inFlightHead == inFlight.count {
            inFlight.removeAll(keepingCapacity: true)
            inFlightHead = 0
        } else if inFlightHead >= 1024 && inFlightHead * 2 >= inFlight.count {
            inFlight.removeFirst(inFlightHead)
            inFlightHead = 0
        }
        if case .integer = reply {
            publisher?.acknowledged(route: route, accepted: true)
        } else {
            publisher?.acknowledged(route: route, accepted: false)
        }
    }

    func redisConnectionDidClose(_ connection: BenchRedisConnection, error: String?) {
        ready = false
        if let error { counters.fail("publisher: \(error)") }
        let lost = inFlight[inFlightHead...]
        inFlight = []
        inFlightHead = 0
        for route in lost { publisher?.acknowledged(route: route, accepted: false) }
    }
}

@available(*, unavailable)
extension RedisPublishSink: Sendable {}
