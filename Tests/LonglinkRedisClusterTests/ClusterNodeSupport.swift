import Foundation
import LonglinkServer
import LonglinkCore
import LonglinkGateway
import LonglinkRedis
import LonglinkStores
import LonglinkTestSupport
import Synchronization
import Testing

/// Log lines kept in memory (with the time since the sink was made), printed when a test wants to explain a failure.
final class CollectingLogSink: LogSink {
    private let lines = Mutex<[String]>([])
    private let start = ContinuousClock.now

    func write(_ record: LogRecord) {
        let elapsed = ContinuousClock.now - start
        guard record.label.contains("broker") || record.level >= .notice else { return }
        lines.withLock { $0.append("\(elapsed) \(record.label) \(record.level): \(record.message)") }
    }

    /// Every line so far.
    var text: String { lines.withLock { $0.joined(separator: "\n") } }
}

/// A gateway node in this process on a Redis Cluster (store and broker), under `prefix`.
func startClusterNode(
    _ name: String,
    cluster: RedisCluster,
    prefix: String,
    durability: RedisDurability = .master,
    log: CollectingLogSink? = nil
) throws -> RunningGateway {
    try RunningGateway.start(
        gateway: GatewayConfiguration(
            host: "127.0.0.1",
            port: 0,
            loopCount: 1,
            peer: PeerSettings(nodeID: name),
            drainPeriod: .milliseconds(200)
        ),
        store: try StoreSpecification(parsing: cluster.url),
        logger: log.map { Logger(label: name, level: .debug, sink: $0) } ?? .disabled,
        broker: .redisCluster(try #require(RedisClusterAddress(url: cluster.url))),
        redis: RedisSettings(prefix: prefix, durability: durability)
    )
}

/// An order id whose keys are in a slot `accept`s (found by trying `base-0`, `base-1`, …).
func orderID(_ base: String, where accept: (Int) -> Bool) -> String {
    for index in 0..<1_000_000 {
        let id = "\(base)-\(index)"
        if accept(RedisClusterSlot.of("taxi/\(id)")) { return id }
    }
    preconditionFailure("no id for \(base)")
}

/// Publishes a sequence of changes on its own thread, retrying retryable failures with the same change (same
/// idempotency key) until a deadline; counts what happened.
final class RetryingPublisher: Sendable {
    let accepted = Atomic<Int>(0)
    let deduplicated = Atomic<Int>(0)
    let retryableFailures = Atomic<Int>(0)
    let errors = Mutex<[String]>([])
    let finished = Atomic<Bool>(false)

    init(_ changes: [OrderChange], pause: Duration = .milliseconds(5), deadline: Duration = .seconds(60), writer: StoreWriter) {
        let thread = Thread { [self] in
            let end = ContinuousClock.now + deadline
            for change in changes {
                retry: while true {
                    switch applyAndWait(writer, change, timeout: .seconds(20)) {
                    case .success(let applied):
                        accepted.add(1, ordering: .relaxed)
                        if applied.deduplicated { deduplicated.add(1, ordering: .relaxed) }
                    case .failure(.storage(let why, true)):
                        retryableFailures.add(1, ordering: .relaxed)
                        guard ContinuousClock.now < end else {
                            errors.withLock { $0.append("gave up: \(why)") }
                            break retry
                        }
                        usleep(20_000)
                        continue retry
                    case .failure(let error):
                        errors.withLock { $0.append("\(change.idempotencyKey): \(error)") }
                    }
                    break retry
                }
                usleep(UInt32(pause.components.attoseconds / 1_000_000_000_000))
            }
            finished.store(true, ordering: .releasing)
        }
        thread.start()
    }

    /// Waits (bounded) until every change was handled.
    func waitUntilFinished(timeout: Duration = .seconds(75)) -> Bool {
        eventually(timeout: timeout) { self.finished.load(ordering: .acquiring) }
    }
}

/// Follows one route like a resuming client: on a disconnect or a dead node it connects to the next node in
/// `ports` and subscribes with its last position; records every offset it was given.
final class RouteFollower {
    let route: Route
    let ports: [Int]
    private var client: FramePeer?
    private(set) var position: StreamPosition?
    /// Offsets received (from recovery or pushes), in order, without repeats.
    private(set) var offsets: [UInt64] = []
    /// `recovered` of every `subscribed` frame after the first.
    private(set) var recoveries: [Bool] = []
    /// Epochs of the `subscribed` frames.
    private(set) var epochs: [UInt32] = []
    private(set) var connections = 0
    /// What happened, for diagnosing a failure.
    private(set) var journal: [String] = []

    init(_ route: Route, ports: [Int]) {
        self.route = route
        self.ports = ports
    }

    /// Connects to the first node that answers (bounded); throws when none does.
    func connect(timeout: Duration = .seconds(30)) throws {
        let deadline = ContinuousClock.now + timeout
        var index = connections
        while ContinuousClock.now < deadline {
            let port = ports[index % ports.count]
            index += 1
            if let client = try? FramePeer(port: port), (try? client.handshake()) != nil,
                let subscribed = try? client.subscribe(route, since: position ?? .zero)
            {
                connections += 1
                journal.append(
                    "port \(port) since \(position.map { "\($0)" } ?? "-"): recovered \(subscribed.recovered), position \(subscribed.position), "
                        + "missed \(subscribed.missed.first?.position.offset ?? 0)…\(subscribed.missed.last?.position.offset ?? 0), last taken \(offsets.last ?? 0)"
                )
                if connections > 1 { recoveries.append(subscribed.recovered) }
                epochs.append(subscribed.position.epoch)
                if let position, subscribed.position.epoch != position.epoch { offsets.removeAll() }
                for record in subscribed.missed { take(record.position) }
                if position == nil || subscribed.position.epoch != position!.epoch || subscribed.position > position! {
                    position = subscribed.position
                }
                self.client = client
                return
            }
            usleep(50_000)
        }
        throw FollowerGaveUp(description: "no node of \(ports) accepted a subscription to \(route)")
    }

    /// Reads pushes (reconnecting as needed) until `done` holds or `timeout` passes.
    func pump(timeout: Duration = .seconds(60), until done: () -> Bool) throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        if client == nil { try connect() }
        while ContinuousClock.now < deadline {
            if done() { return true }
            guard let client else {
                try connect()
                continue
            }
            switch try client.next(timeout: .milliseconds(100)) {
            case .push(let push)?:
                if offsets.count < 30 || push.record.position.offset != (offsets.last ?? 0) + 1 {
                    journal.append("push \(push.record.position) after \(offsets.last ?? 0)")
                }
                take(push.record.position)
            case .disconnect(let why)?:
                journal.append("disconnect \(why.code) after \(offsets.last ?? 0)")
                self.client = nil
            case nil where client.eof: self.client = nil
            default: break
            }
        }
        return done()
    }

    private func take(_ position: StreamPosition) {
        if let current = self.position, position.epoch == current.epoch, position.offset <= (offsets.last ?? 0) { return }
        offsets.append(position.offset)
        self.position = position
    }
}

/// A follower found no node to subscribe on.
struct FollowerGaveUp: Error, CustomStringConvertible {
    let description: String
}

/// Every retained record of an order, read from a fresh store on the cluster.
func storedHistory(_ cluster: RedisCluster, prefix: String, _ id: String) throws -> [OrderChangeRecord] {
    let store = try RedisOrderStore(cluster: RedisClusterAddress(url: cluster.url)!, prefix: prefix)
    defer { store.shutdown() }
    return try OrderFixtures.history(store, .taxi, id) ?? []
}
