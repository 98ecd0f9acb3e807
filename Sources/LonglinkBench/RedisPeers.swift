import LonglinkCore
import LonglinkLoop
import LonglinkRedis

/// One benchmark subscriber on Redis pub/sub: `SUBSCRIBE` to its channel, then the same sequence and latency
/// checks as `LonglinkSubscriber`. Loop-confined.
final class RedisSubscriber: BenchSubscriber {
    let index: Int
    private let connection: RedisConnection?
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
        self.counters = counters
        let recorder = context.attachment(LoopRecorder.self)!
        self.recorder = recorder
        let startedAt = MonotonicClock.nanoseconds()
        do {
            connection = try RedisConnection(address: address, on: context)
        } catch {
            connection = nil
            counters.fail("connect: \(error)")
            return
        }
        connection?.onConnected = {
            counters.connected.add(1)
            recorder.connect.record(MonotonicClock.nanoseconds() &- startedAt)
        }
        connection?.onMessage = { [unowned self] _, payload in deliver(payload) }
        connection?.onClose = { [weak self] error in
            guard let self, !closing else { return }
            counters.fail("redis: \(error.map { "\($0)" } ?? "closed")")
            onLost?(self)
        }
        connection?.subscribe([channel]) { [weak self] result in
            guard let self else { return }
            switch result {
            case .success:
                isSubscribed = true
                onSubscribed?(self)
            case .failure(let error):
                counters.fail("subscribe: \(error)")
            }
        }
    }

    func close() {
        closing = true
        connection?.close()
    }

    /// Whether the connection could not even start.
    var failedToStart: Bool { connection == nil }

    private func deliver(_ payload: UnsafeRawBufferPointer) {
        guard let stamp = BenchPayload.read(payload) else { return }
        if stamp.sequence <= lastSequence {
            counters.duplicates.add(1)
            return
        }
        if stamp.sequence > lastSequence + 1 && lastSequence > 0 { counters.gaps.add(Int(stamp.sequence - lastSequence - 1)) }
        lastSequence = stamp.sequence
        counters.deliveries.add(1)
        recorder.recordDelivery(sentAt: stamp.timestamp, now: MonotonicClock.nanoseconds())
    }
}

@available(*, unavailable)
extension RedisSubscriber: Sendable {}

/// Publishes benchmark messages with pipelined `PUBLISH`es on one connection; replies come back in order.
/// Loop-confined.
final class RedisPublishSink: PublishSink {
    private let connection: RedisConnection?
    private let channels: [[UInt8]]
    private var ready = false
    weak var publisher: PacedPublisher?
    /// Called when the connection is up.
    var onReady: (() -> Void)?

    init(names: RouteNames, routes: Int, address: SocketAddress, context: LoopContext, counters: BenchCounters) {
        channels = (0..<routes).map { Array(names.channel($0).utf8) }
        do {
            connection = try RedisConnection(address: address, on: context)
        } catch {
            connection = nil
            counters.fail("publisher connect: \(error)")
            return
        }
        connection?.onConnected = { [weak self] in
            self?.ready = true
            self?.onReady?()
        }
        connection?.onClose = { error in
            if let error { counters.fail("publisher: \(error)") }
        }
    }

    var isReady: Bool { ready && !(connection?.isClosed ?? true) }

    func close() { connection?.close() }

    func publish(route: Int, sequence: UInt64, payload: [UInt8]) {
        connection?.publish(channel: channels[route], message: payload) { [weak self] result in
            if case .success = result {
                self?.publisher?.acknowledged(route: route, accepted: true)
            } else {
                self?.publisher?.acknowledged(route: route, accepted: false)
            }
        }
    }
}

@available(*, unavailable)
extension RedisPublishSink: Sendable {}
