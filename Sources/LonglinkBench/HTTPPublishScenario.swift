import Foundation
import Glibc
import LonglinkCore
import LonglinkLoop
import Synchronization

/// `bench http-publish`: `--connections` keep-alive HTTP/1.1 connections to the backend API (`POST /api/v1/publish`),
/// each sending its next change as soon as the previous one is answered (closed loop), for `--duration`. Each
/// connection changes its own taxi order (created, dispatching, then driver_assigned ⇄ dispatching), so every
/// request is a legal, committed change. Reports changes/s and the request→response latency. Without `--server`
/// bench's own gateway opens its API on a free port; with `--server HOST:PORT` that is the API's address (and
/// `LONGLINK_TOKEN` a publisher token for it).
enum HTTPPublishScenario {
    static func run(_ context: ScenarioContext, into report: inout BenchReport) throws {
        let parameters = context.parameters
        let address: SocketAddress
        if parameters.server != nil {
            address = context.servers.gateway.address
        } else {
            let log = context.servers.gateway.child?.log ?? ""
            guard let range = log.range(of: "backend API: http://127.0.0.1:"),
                let port = Int(log[range.upperBound...].prefix { $0.isNumber })
            else { throw BenchError("bench's gateway did not report its API listener:\n\(log.suffix(2_000))") }
            address = try SocketAddress(ipAddress: "127.0.0.1", port: port)
        }
        let token = ProcessInfoToken.value
        let counts = HTTPRunCounts()
        let connections = max(1, parameters.connections)
        let tag = String(UInt32.random(in: 0...UInt32.max), radix: 36)
        let loopCount = context.loops.loops.count
        for (position, loop) in context.loops.loops.enumerated() {
            let indices = Array(stride(from: position, to: connections, by: loopCount))
            loop.execute { loopContext in
                let clients = indices.compactMap { index in
                    try? HTTPPublishClient(index: index, address: address, token: token, tag: tag, context: loopContext, counts: counts)
                }
                loopContext.attach(HTTPClients(clients: clients))
            }
        }
        context.control.wait(timeout: parameters.timeoutLimit) { counts.open.load(ordering: .relaxed) >= connections }
        let started = ContinuousClock.now
        context.loops.resetRecorders()
        counts.completed.store(0, ordering: .relaxed)
        counts.measuring.store(true, ordering: .releasing)
        context.control.wait(timeout: parameters.durationLimit) { false }
        counts.measuring.store(false, ordering: .releasing)
        let elapsed = ContinuousClock.now - started
        let histograms = context.loops.collect { loopContext -> LatencyHistogram in
            guard let clients = loopContext.attachment(HTTPClients.self) else { return LatencyHistogram() }
            var merged = LatencyHistogram()
            for client in clients.clients {
                merged.merge(client.histogram)
                client.close()
            }
            loopContext.detach(HTTPClients.self)
            return merged
        }
        var histogram = LatencyHistogram()
        for part in histograms { histogram.merge(part) }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let completed = counts.completed.load(ordering: .relaxed)
        var run = BenchRun(system: "longlink", label: "POST /api/v1/publish, \(connections) keep-alive connections, closed loop")
        run.figures = [
            Figure("connections", Double(connections)),
            Figure("changes_per_second", Double(completed) / max(seconds, 0.001), "changes/s"),
            Figure("changes", Double(completed)),
            Figure("non_200", Double(counts.failed.load(ordering: .relaxed))),
            Figure("p50_ms", Double(histogram.value(atPercentile: 50)) / 1e6, "ms"),
            Figure("p99_ms", Double(histogram.value(atPercentile: 99)) / 1e6, "ms"),
            Figure("max_ms", Double(histogram.value(atPercentile: 100)) / 1e6, "ms"),
        ]
        run.latency = LatencySummary(histogram)
        if let stats = context.servers.gateway.stats { run.figures.append(Figure("server_rss", Double(stats.residentBytes), "bytes")) }
        report.runs.append(run)
    }
}

/// The publisher token for `--server` runs (`LONGLINK_TOKEN`); bench's own gateway admits any token.
private enum ProcessInfoToken {
    static var value: String {
        guard let raw = getenv("LONGLINK_TOKEN") else { return "bench" }
        let text = String(cString: raw)
        return text.isEmpty ? "bench" : text
    }
}

/// Counters shared by the clients and the coordinating thread.
final class HTTPRunCounts: Sendable {
    let open = Atomic<Int>(0)
    let completed = Atomic<Int>(0)
    let failed = Atomic<Int>(0)
    let measuring = Atomic<Bool>(false)
}

/// The clients of one loop.
final class HTTPClients {
    let clients: [HTTPPublishClient]
    init(clients: [HTTPPublishClient]) { self.clients = clients }
}

@available(*, unavailable)
extension HTTPClients: Sendable {}

/// One keep-alive connection to the API: sends a publish, reads the whole response (its `Content-Length`), records
/// the latency, sends the next.
final class HTTPPublishClient: SelectorHandler {
    private let fd: CInt
    private let context: LoopContext
    private let counts: HTTPRunCounts
    private let head: String
    private let orderID: String
    private var registration: RegistrationID?
    private var connected: Bool
    private var closed = false
    private var step = 0
    private var sentAt: UInt64 = 0
    private var pending: [UInt8] = []
    private var inbound: [UInt8] = []
    private(set) var histogram = LatencyHistogram()

    init(index: Int, address: SocketAddress, token: String, tag: String, context: LoopContext, counts: HTTPRunCounts) throws {
        self.context = context
        self.counts = counts
        self.orderID = "h\(tag)-\(index)"
        self.head = "POST /api/v1/publish HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer \(token)\r\nContent-Type: application/json\r\n"
        (fd, connected) = try Socket.connect(to: address)
        try Socket.enableNoDelay(fd)
        registration = try context.register(fd: fd, interest: connected ? .read : .write, handler: self)
        if connected { didConnect() }
    }

    private func didConnect() {
        connected = true
        counts.open.add(1, ordering: .relaxed)
        sendNext()
    }

    private func sendNext() {
        let state = step == 0 ? "created" : step % 2 == 1 ? "dispatching" : "driver_assigned"
        let extra = state == "driver_assigned" ? #","driver_id":"d-1","eta_seconds":120"# : ""
        let body = #"{"order":""# + orderID + #"","line":"taxi","state":""# + state + "\"" + extra + "}"
        pending = Array((head + "Content-Length: \(body.utf8.count)\r\n\r\n" + body).utf8)
        sentAt = MonotonicClock.nanoseconds()
        write()
    }

    private func write() {
        while !pending.isEmpty && !closed {
            let result = pending.withUnsafeBytes { try? Socket.write(fd, $0) }
            switch result {
            case .processed(let count)?: pending.removeFirst(count)
            case .wouldBlock?: return setInterest([.read, .write])
            case nil: return close()
            }
        }
        setInterest(.read)
    }

    func handleEvent(_ event: SelectorEvent) {
        guard !closed else { return }
        if !connected {
            guard (try? Socket.finishConnect(fd)) == true else { return close() }
            didConnect()
            return
        }
        if event.contains(.write) { write() }
        var scratch = [UInt8](repeating: 0, count: 4_096)
        while !closed {
            let result = scratch.withUnsafeMutableBytes { try? Socket.read(fd, into: $0) }
            switch result {
            case .processed(0)?, nil: return close()
            case .processed(let count)?: inbound.append(contentsOf: scratch[0..<count])
            case .wouldBlock?:
                parseResponses()
                return
            }
        }
    }

    /// Takes every complete response off `inbound` (one is outstanding at a time).
    private func parseResponses() {
        guard let end = Self.find(inbound, Array("\r\n\r\n".utf8)) else { return }
        let headText = String(decoding: inbound[0..<end], as: UTF8.self)
        var length = 0
        for line in headText.split(separator: "\r\n") where line.lowercased().hasPrefix("content-length:") {
            length = Int(line.dropFirst("content-length:".count).drop { $0 == " " }) ?? 0
        }
        guard inbound.count >= end + 4 + length else { return }
        let ok = headText.hasPrefix("HTTP/1.1 200")
        inbound.removeFirst(end + 4 + length)
        if counts.measuring.load(ordering: .relaxed) {
            histogram.record(MonotonicClock.nanoseconds() &- sentAt)
            counts.completed.add(1, ordering: .relaxed)
            if !ok { counts.failed.add(1, ordering: .relaxed) }
        } else if !ok {
            counts.failed.add(1, ordering: .relaxed)
        }
        if ok { step += 1 }
        if !closed { sendNext() }
    }

    private static func find(_ bytes: [UInt8], _ pattern: [UInt8]) -> Int? {
        guard bytes.count >= pattern.count else { return nil }
        for start in 0...(bytes.count - pattern.count) where bytes[start] == pattern[0] {
            if Array(bytes[start..<(start + pattern.count)]) == pattern { return start }
        }
        return nil
    }

    private func setInterest(_ interest: SelectorEvent) {
        guard let registration else { return }
        try? context.reregister(registration, interest: interest)
    }

    func close() {
        guard !closed else { return }
        closed = true
        if let registration { context.deregister(registration) }
        registration = nil
        Socket.close(fd)
    }
}

@available(*, unavailable)
extension HTTPPublishClient: Sendable {}
