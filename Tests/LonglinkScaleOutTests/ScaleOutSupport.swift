import Foundation
import Glibc
import LonglinkServer
import LonglinkCore
import LonglinkGateway
import LonglinkLoop
import LonglinkProtobuf
import LonglinkRedis
import LonglinkStores
import LonglinkTestSupport
import Synchronization
import Testing

/// A gateway node in this process, sharing the Redis at `redisPort` for its store and broker.
func startNode(_ name: String, redisPort: Int) throws -> RunningGateway {
    try RunningGateway.start(
        gateway: GatewayConfiguration(
            host: "127.0.0.1",
            port: 0,
            loopCount: 1,
            peer: PeerSettings(nodeID: name),
            drainPeriod: .milliseconds(200)
        ),
        store: .redis(host: "127.0.0.1", port: redisPort, database: 0),
        broker: .redis(RedisAddress(host: "127.0.0.1", port: redisPort))
    )
}

/// Publishes a sequence of changes on its own thread, retrying retryable failures (same idempotency key) until
/// a deadline; records what happened.
final class BackgroundPublisher: Sendable {
    let accepted = Atomic<Int>(0)
    let retryableFailures = Atomic<Int>(0)
    let errors = Mutex<[String]>([])
    let finished = Atomic<Bool>(false)

    init(_ changes: [OrderChange], pause: Duration = .milliseconds(2), deadline: Duration = .seconds(60), writer: @escaping @Sendable () -> StoreWriter) {
        let thread = Thread { [self] in
            let end = ContinuousClock.now + deadline
            for change in changes {
                while true {
                    switch applyAndWait(writer(), change) {
                    case .success:
                        accepted.add(1, ordering: .relaxed)
                    case .failure(.storage(let why, true)):
                        retryableFailures.add(1, ordering: .relaxed)
                        guard ContinuousClock.now < end else {
                            errors.withLock { $0.append("gave up: \(why)") }
                            finished.store(true, ordering: .releasing)
                            return
                        }
                        usleep(20_000)
                        continue
                    case .failure(let error):
                        errors.withLock { $0.append("\(error)") }
                    }
                    break
                }
                usleep(UInt32(pause.components.attoseconds / 1_000_000_000_000))
            }
            finished.store(true, ordering: .releasing)
        }
        thread.start()
    }

    /// Waits (bounded) until every change was handled.
    func waitUntilFinished(timeout: Duration = .seconds(90)) -> Bool {
        eventually(timeout: timeout) { self.finished.load(ordering: .acquiring) }
    }
}

/// A blocking raw client (frames over a plain socket) for following one route across nodes.
typealias RawClient = FramePeer

extension FramePeer {
    /// Handshake and subscribe; the `subscribed` frame, or nil.
    func follow(_ route: Route, since: StreamPosition?) throws -> Subscribed? {
        try send(.connect(ConnectRequest(clientName: "scale-out-test")))
        let deadline = ContinuousClock.now + .seconds(5)
        var connected = false
        while ContinuousClock.now < deadline, let frame = try next(timeout: deadline - ContinuousClock.now) {
            if case .connected = frame {
                connected = true
                try send(.subscribe(SubscribeRequest(requestID: 1, route: route.text, since: since)))
            }
            if connected, case .subscribed(let subscribed) = frame { return subscribed }
            if case .error = frame { return nil }
        }
        return nil
    }
}

/// Follows one route like a resuming client: on a disconnect or a dead node it connects to the next node in
/// `ports` and subscribes with its last position; records every offset it was given.
final class Follower {
    let route: Route
    var ports: [Int]
    private var client: RawClient?
    private(set) var position: StreamPosition?
    /// Offsets received (from recovery or pushes), in order, without duplicates.
    private(set) var offsets: [UInt64] = []
    /// `recovered` of every `subscribed` frame after the first.
    private(set) var recoveries: [Bool] = []
    private(set) var connections = 0

    init(_ route: Route, ports: [Int]) {
        self.route = route
        self.ports = ports
    }

    /// Connects to the first node that answers (bounded); throws when none does.
    func connect(timeout: Duration = .seconds(20)) throws {
        let deadline = ContinuousClock.now + timeout
        var index = 0
        while ContinuousClock.now < deadline {
            let port = ports[index % ports.count]
            index += 1
            if let client = try? RawClient(port: port), let subscribed = try? client.follow(route, since: position ?? .zero) {
                connections += 1
                if connections > 1 { recoveries.append(subscribed.recovered) }
                if let position, subscribed.position.epoch != position.epoch { offsets.removeAll() }
                for record in subscribed.missed { take(record.position) }
                if position == nil || subscribed.position > position! { position = subscribed.position }
                self.client = client
                return
            }
            usleep(50_000)
        }
        throw FollowerError(description: "no node of \(ports) accepted a subscription to \(route)")
    }

    /// Reads pushes (reconnecting as needed) until `done` holds or `timeout` passes.
    func pump(timeout: Duration = .seconds(60), until done: () -> Bool) throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        if client == nil { try connect() }
        while ContinuousClock.now < deadline {
            if done() { return true }
            guard let client else { try connect(); continue }
            let frame = try client.next(timeout: .milliseconds(200))
            switch frame {
            case .push(let push)?:
                take(push.record.position)
            case .disconnect?:
                self.client = nil
            case nil where client.eof:
                self.client = nil
            default:
                break
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

struct FollowerError: Error, CustomStringConvertible {
    let description: String
}

/// `longlink serve` as a child process (a node that a test can SIGKILL), its stderr in a file.
final class NodeProcess {
    let process: ChildProcess
    private let stderrPath = NSTemporaryDirectory() + "longlink-node-\(UUID().uuidString).err"
    private(set) var port = 0

    init(_ arguments: [String]) throws {
        let executable = try #require(Self.executable(), "longlink is not built")
        process = try ChildProcess(
            executable,
            ["serve", "--listen", "127.0.0.1:0", "--loops", "1", "--drain-period", "200ms", "--insecure-dev", "--metrics-listen", "off"] + arguments,
            standardError: stderrPath
        )
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline && port == 0 && process.isRunning {
            let text = process.standardErrorText
            if let range = text.range(of: #"serving on 127\.0\.0\.1:(\d+)"#, options: .regularExpression) {
                port = Int(text[range].split(separator: ":").last!)!
            } else {
                usleep(10_000)
            }
        }
    }

    /// SIGKILL and reap.
    func kill9() { process.kill() }

    deinit {
        kill9()
        try? FileManager.default.removeItem(atPath: stderrPath)
    }

    /// The `longlink` executable built next to this test binary.
    static func executable() -> String? {
        var candidates: [String] = []
        if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            candidates.append((path as NSString).deletingLastPathComponent + "/longlink")
        }
        let package = ((("\(#filePath)" as NSString).deletingLastPathComponent as NSString).deletingLastPathComponent as NSString)
            .deletingLastPathComponent
        candidates.append(package + "/.build/debug/longlink")
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}
