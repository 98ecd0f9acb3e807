// longlink-allocation-budget: heap allocations per published record on the many-route path (issue 19: ≤ 2).
//
// A real gateway in this process (the composition `longlink serve` runs: memory store, one loop, port 0), S
// subscribers each on its own route and one publisher, all over real loopback sockets driven by this program's main
// thread. After a warm-up, N publishes go one at a time: each is acknowledged to the publisher (`publishResult`)
// and delivered to its route's subscriber (`push`) before the next is sent, so every record takes the whole path
// alone (read, decode, validate, commit, hand-off, encode, flush) and no batching hides a cost. The allocator is
// interposed (CLonglinkAllocationCounter); the figure is the allocations of every thread except the main thread
// (which runs the clients) during the N publishes, divided by N.
//
// Each order keeps its last H records (`--history`, default 64), and the warm-up moves every order past twice as
// many (the most its history array holds between two compactions), so the window measures the path in its steady
// state: a new record's history slot is one an old record gave up. An order's history array growing to its kept
// length is a cost per order, not per record (about log₂ H allocations over the order's life: with the standard
// 1,000 records, 20 orders and 600 records measured right after 10 records each, it added 0.03–0.07 per record in
// the window).
//
// A separate process, not a test in the shared test bundle: there every other suite's gateways, clients and
// threads allocate at the same time, and the interposed allocator would count calls of every test. Run by
// LonglinkAllocationTests (debug build, debug ceiling) and `make test-release-budgets` (release build, release ceiling).
//
// usage: longlink-allocation-budget [--records N] [--warmup W] [--subscribers S] [--history H] [--ceiling C]
// Prints `allocations_per_record X` (and a breakdown per thread); exits 1 when X > C.

import CLonglinkAllocationCounter
import Glibc
import LonglinkCore
import LonglinkGateway
import LonglinkLoop
import LonglinkProtobuf
import LonglinkServer
import LonglinkStores

struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A client over a blocking loopback socket, read with a deadline.
final class Peer {
    let fd: CInt
    private var inbound = ByteBuffer()
    private var outbound = ByteBuffer()
    private let codec = ProtobufFrameCodec()

    init(port: Int) throws {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure("socket: errno \(errno)") }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else { throw Failure("connect to 127.0.0.1:\(port): errno \(errno)") }
        var one: CInt = 1
        _ = setsockopt(fd, CInt(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<CInt>.size))
    }

    deinit { close(fd) }

    func send(_ frame: ClientFrame) throws {
        outbound.clear()
        try codec.encode(frame, into: &outbound)
        let bytes = outbound.readableArray
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw Failure("send: errno \(errno)")
            }
            offset += n
        }
    }

    /// The next frame that `match` accepts (others are skipped); throws at EOF or after `timeout`.
    func next<T>(timeout: Duration = .seconds(30), _ match: (ServerFrame) -> T?) throws -> T {
        let deadline = ContinuousClock.now + timeout
        while true {
            while let frame = try codec.decodeNextServerFrame(from: &inbound, reader: FrameReader(maxFrameSize: 1 << 22)) {
                if let value = match(frame) { return value }
            }
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { throw Failure("no expected frame within \(timeout)") }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let millis = Int32(min(remaining.components.seconds * 1000 + 1, 60_000))
            guard poll(&pfd, 1, millis) > 0 else { continue }
            let count = inbound.writeWithUnsafeMutableBytes(minimumWritableBytes: 65_536) { raw -> Int in
                max(0, Glibc.recv(fd, raw.baseAddress, raw.count, 0))
            }
            if count == 0 { throw Failure("the gateway closed the connection") }
        }
    }
}

/// Names of this process's threads by kernel id (`/proc/self/task/<tid>/comm`).
func threadName(_ tid: Int32) -> String {
    let text = ProcFile.read("/proc/self/task/\(tid)/comm") ?? "(ended)"
    return String(text.split(separator: "\n").first ?? "")
}

func option(_ name: String, _ fallback: Int) throws -> Int {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name) else { return fallback }
    guard index + 1 < arguments.count, let value = Int(arguments[index + 1]), value >= 0 else {
        throw Failure("\(name) needs a number")
    }
    return value
}

func run() throws -> Int32 {
    let records = max(1, try option("--records", 600))
    let warmup = try option("--warmup", 200)
    let subscriberCount = max(1, try option("--subscribers", 20))
    let history = max(1, try option("--history", 64))
    let ceilingText = CommandLine.arguments.firstIndex(of: "--ceiling").flatMap {
        $0 + 1 < CommandLine.arguments.count ? CommandLine.arguments[$0 + 1] : nil
    }
    let ceiling = try ceilingText.map { text -> Double in
        guard let value = Double(text) else { throw Failure("--ceiling needs a number") }
        return value
    }

    // The counter is in effect: an allocation on this thread is counted.
    let main = CLonglinkAllocationCounter_currentThread()
    let probeBefore = CLonglinkAllocationCounter_thread(main)
    let probe = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 16)
    probe.deallocate()
    guard CLonglinkAllocationCounter_thread(main) > probeBefore else {
        throw Failure("the allocation counter does not see this process's allocations (malloc is not interposed)")
    }

    let running = try RunningGateway.start(
        gateway: GatewayConfiguration(host: "127.0.0.1", port: 0, loopCount: 1, peer: PeerSettings(nodeID: "budget-node")),
        store: .memory,
        retention: StoreRetention(maxRecordsPerOrder: history)
    )
    defer { running.drainAndStop() }
    let port = running.gateway.port

    let orders = (0..<subscriberCount).map { OrderID("budget-\($0)")! }
    var subscribers: [Peer] = []
    for order in orders {
        let peer = try Peer(port: port)
        try peer.send(.connect(ConnectRequest(token: "", clientName: "budget-subscriber")))
        _ = try peer.next { if case .connected(let c) = $0 { c } else { nil } }
        try peer.send(.subscribe(SubscribeRequest(requestID: 1, route: Route.order(.taxi, order).text, since: nil)))
        _ = try peer.next { if case .subscribed(let s) = $0 { s } else { nil } }
        subscribers.append(peer)
    }
    let publisher = try Peer(port: port)
    try publisher.send(.connect(ConnectRequest(token: "", clientName: "budget-publisher")))
    _ = try publisher.next { if case .connected(let c) = $0 { c } else { nil } }

    // Each order goes created, then dispatching ⇄ driver_assigned (a driver taking it and dropping out) for ever.
    var changes = [Int](repeating: 0, count: subscriberCount)
    var requestID: UInt32 = 0
    func publish(_ index: Int) throws {
        let step = changes[index]
        changes[index] += 1
        requestID &+= 1
        let request: PublishRequest
        switch step {
        case 0: request = PublishRequest(requestID: requestID, orderID: orders[index].rawValue, line: "taxi", targetState: "created")
        case _ where step % 2 == 1:
            request = PublishRequest(requestID: requestID, orderID: orders[index].rawValue, line: "taxi", targetState: "dispatching")
        default:
            request = PublishRequest(
                requestID: requestID,
                orderID: orders[index].rawValue,
                line: "taxi",
                targetState: "driver_assigned",
                fields: OrderFields(driverID: "driver-\(step % 7)", etaSeconds: UInt32(step % 600))
            )
        }
        try publisher.send(.publish(request))
        let id = requestID
        let outcome = try publisher.next { frame -> PublishResult.Outcome? in
            if case .publishResult(let result) = frame, result.requestID == id { result.outcome } else { nil }
        }
        guard case .accepted = outcome else { throw Failure("publish \(id) (\(request.targetState)) refused: \(outcome)") }
        _ = try subscribers[index].next { if case .push(let push) = $0 { push } else { nil } }
    }

    // Warm-up: every order created and moved past twice its kept history (the memory store compacts a history once
    // more than half of its array is dropped records, so the array's full size is about twice the kept length), the
    // loop's buffers and tables grown to size.
    let warmupPublishes = max(warmup, subscriberCount * (2 * history + 8))
    for index in 0..<warmupPublishes { try publish(index % subscriberCount) }

    let before = counts()
    for index in 0..<records { try publish(index % subscriberCount) }
    let after = counts()

    var perThread: [(tid: Int32, count: UInt64)] = []
    for (tid, count) in after where tid != main {
        let delta = count - (before[tid] ?? 0)
        if delta > 0 { perThread.append((tid, delta)) }
    }
    perThread.sort { $0.count > $1.count }
    let total = perThread.reduce(0) { $0 + $1.count }
    let perRecord = Double(total) / Double(records)
    let breakdown = perThread.map { "\(threadName($0.tid)) \(formatted(Double($0.count) / Double(records)))" }
    print("allocations_per_record \(formatted(perRecord))")
    print(
        "\(records) records (after \(warmupPublishes) warm-up publishes), \(subscriberCount) subscribers each on its own route, "
            + "\(history) records of history kept per order, "
            + "memory store, one loop: \(total) allocations on the gateway's threads (per record: "
            + (breakdown.isEmpty ? "none" : breakdown.joined(separator: ", ")) + ")"
    )
    if CLonglinkAllocationCounter_overflow() > 0 { print("warning: more threads than the counter's table holds") }
    if let ceiling, perRecord > ceiling {
        print(
            "FAILED: \(formatted(perRecord)) heap allocations per published record, over this build's ceiling of "
                + "\(formatted(ceiling)) (issue 19's target is ≤ 2)"
        )
        return 1
    }
    return 0
}

/// Every thread's count so far.
func counts() -> [Int32: UInt64] {
    var tids = [Int32](repeating: 0, count: 4_096)
    var values = [UInt64](repeating: 0, count: 4_096)
    let n = Int(CLonglinkAllocationCounter_threads(&tids, &values, 4_096))
    var result: [Int32: UInt64] = [:]
    for index in 0..<min(n, 4_096) { result[tids[index], default: 0] += values[index] }
    return result
}

func formatted(_ value: Double) -> String {
    let hundredths = Int((value * 100).rounded())
    let fraction = hundredths % 100
    return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
}

do {
    exit(try run())
} catch {
    print("FAILED: \(error)")
    exit(2)
}
