import Foundation
import LonglinkServer
import LonglinkCore
import LonglinkGateway
import LonglinkLoop
import LonglinkStores
import LonglinkTestSupport
import LonglinkWebSocket
import Testing

/// A gateway in this process with a WebSocket listener as its main listener, for the limits that need a small
/// socket send buffer (no `serve` option sets one).
final class WebSocketGateway {
    let running: RunningGateway
    var port: Int { running.gateway.port }

    init(outboundLimit: Int, slowPolicy: GatewayConfiguration.SlowConsumerPolicy, socketSendBuffer: Int) throws {
        let endpoint = WebSocketEndpoint(policy: WebSocketUpgradePolicy(), maxMessageSize: 70_000)
        running = try RunningGateway.start(
            gateway: GatewayConfiguration(
                host: "127.0.0.1",
                port: 0,
                loopCount: 1,
                // The peers here never answer a heartbeat (one of them never reads at all), and a test slowed by
                // parallel suites may outlast 25 s + 10 s of silence: the heartbeat must not be what cuts them.
                peer: PeerSettings(nodeID: "ws-node", pingIntervalMillis: 600_000, pongTimeoutMillis: 60_000, handshakeTimeoutMillis: 10_000),
                outboundLimit: outboundLimit,
                slowPolicy: slowPolicy,
                drainPeriod: .milliseconds(300),
                socketSendBuffer: socketSendBuffer,
                transport: WebSocketTransportFactory(inner: PlainTransportFactory(), endpoint: endpoint)
            ),
            store: .memory
        )
    }

    deinit { running.drainAndStop() }

    /// An upgraded, connected peer subscribed to `route`.
    func subscriber(_ route: String, receiveBuffer: Int? = nil) throws -> WebSocketPeer {
        let peer = try WebSocketPeer(port: port, receiveBuffer: receiveBuffer)
        #expect(try peer.upgrade(port: port)?.status == 101)
        #expect(try peer.connect() != nil)
        try peer.send(.subscribe(SubscribeRequest(requestID: 1, route: route)))
        guard case .subscribed? = try peer.nextFrame() else { throw GatewayProcessError(description: "not subscribed to \(route)") }
        return peer
    }
}

/// `count` legal taxi changes for one order (created, then dispatching ⇄ driver_assigned), each with `payload`.
func taxiChanges(_ id: String, count: Int, payload: [UInt8]) -> [OrderChange] {
    let order = OrderID(id)!
    return (0..<count).map { index in
        var change: OrderChange
        switch index {
        case 0: change = OrderChange(orderID: order, line: .taxi, targetState: "created")
        case _ where index % 2 == 1: change = OrderChange(orderID: order, line: .taxi, targetState: "dispatching")
        default:
            change = OrderChange(orderID: order, line: .taxi, targetState: "driver_assigned")
            change.fields.driverID = "d\(index)"
        }
        change.fields.payload = payload
        return change
    }
}

@Suite("WebSocket subscribers under the outbound limit and slow-consumer policy", .serialized, .ownThreads)
struct WebSocketGatewayTests {
    @Test("a stalled WebSocket reader is cut as slow while a healthy one receives everything")
    func stalledReaderIsCut() async throws {
        // The healthy reader has room for 32 pushes: a test thread slowed by parallel suites must not be cut too.
        let gateway = try WebSocketGateway(outboundLimit: 256 * 1024, slowPolicy: .disconnect, socketSendBuffer: 32 * 1024)
        let stalled = try gateway.subscriber("order://taxi/slow1", receiveBuffer: 4096)
        let healthy = try gateway.subscriber("order://taxi/slow1")
        var received = 0
        for change in taxiChanges("slow1", count: 80, payload: [UInt8](repeating: 0x5A, count: 8 * 1024)) {
            _ = try await gateway.running.writer.apply(change)
            if case .push? = try healthy.nextFrame() { received += 1 }
        }
        // A reader slowed by parallel suites may lag a push or two behind the publisher: read up to the last one.
        while received < 80, case .push? = try healthy.nextFrame(seconds: 10) { received += 1 }
        #expect(received == 80)
        let deadline = ContinuousClock.now + .seconds(10)
        while gateway.running.gateway.counters.snapshot.slowDisconnects == 0 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(gateway.running.gateway.counters.snapshot.slowDisconnects == 1)
        #expect(gateway.running.gateway.counters.disconnectsByCode[.slow] == 1)
        #expect(gateway.running.gateway.counters.disconnectsByCode.count == 1, "only the slow cut: \(gateway.running.gateway.counters.disconnectsByCode)")
        _ = stalled
    }

    @Test("under the coalesce policy a stalled WebSocket reader keeps only the newest record, marked skipped")
    func stalledReaderIsCoalesced() async throws {
        let gateway = try WebSocketGateway(outboundLimit: 32 * 1024, slowPolicy: .coalesce, socketSendBuffer: 16 * 1024)
        let stalled = try gateway.subscriber("order://taxi/slow2", receiveBuffer: 4096)
        for change in taxiChanges("slow2", count: 60, payload: [UInt8](repeating: 0x33, count: 8 * 1024)) {
            _ = try await gateway.running.writer.apply(change)
        }
        // Records reach the loops after the Store made them durable: wait for the first one held back.
        let deadline = ContinuousClock.now + .seconds(10)
        while gateway.running.gateway.counters.snapshot.coalescedRecords == 0 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(gateway.running.gateway.counters.snapshot.coalescedRecords > 0)
        var offsets: [UInt64] = []
        var skipped = false
        while case .push(let push)? = try stalled.nextFrame(seconds: 5) {
            offsets.append(push.record.position.offset)
            if push.skippedBefore { skipped = true }
            if push.record.position.offset == 60 { break }
        }
        #expect(skipped)
        #expect(offsets.last == 60)
        #expect(offsets == offsets.sorted())
        #expect(offsets.count < 60)
        #expect(gateway.running.gateway.counters.snapshot.connections == 1)
    }
}
