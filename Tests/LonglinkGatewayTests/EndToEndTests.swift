import LonglinkTestSupport
import Foundation
import LonglinkClient
import LonglinkServer
import LonglinkCore
import LonglinkLoop
import LonglinkGateway
import LonglinkStores
import Synchronization
import Testing

/// Collects what an observer is told, for assertions.
final class ChangeLog: ContentObserver {
    private let changes = Mutex<[ContentChange]>([])
    func contentDidChange(_ change: ContentChange) { changes.withLock { $0.append(change) } }
    var all: [ContentChange] { changes.withLock { $0 } }
    var offsets: [UInt64] { all.filter { $0.kind == .change }.map(\.record.position.offset) }
    /// The highest offset known: the last change's, or a snapshot's when nothing changed since.
    var lastOffset: UInt64 { all.last?.snapshot.position.offset ?? 0 }
    /// Every offset from 1 to `last` seen exactly once: covered by the first snapshot (a subscribe that raced with
    /// the first publishes) and then delivered one by one, in order.
    func coversExactlyOnce(upTo last: UInt64) -> Bool {
        let covered = all.first(where: { $0.kind == .snapshot })?.snapshot.position.offset ?? 0
        guard covered <= last else { return false }
        return covered == last ? offsets.isEmpty : offsets == Array((covered + 1)...last)
    }
}

@Suite("Gateway end to end (real sockets, real Store writer)", .serialized, .ownThreads)
struct EndToEndTests {
    let route = Route.order(.taxi, OrderID("8812")!)

    /// `count` raw peers of `harness`, each connected and subscribed to `route`.
    private func subscribedPeers(_ count: Int, _ harness: GatewayHarness) throws -> [RawPeer] {
        try (0..<count).map { _ in
            let peer = try RawPeer(port: harness.port)
            try peer.handshake()
            _ = try peer.subscribe(route)
            return peer
        }
    }

    @Test("subscribe, publish, receive through a delegate, a block and an async sequence", arguments: SelectorBackend.allCases)
    func threeObserverStyles(backend: SelectorBackend) async throws {
        let harness = try GatewayHarness()
        defer { harness.stop() }
        let subscriber = try harness.client(backend: backend)
        defer { subscriber.close() }
        let delegate = ChangeLog()
        let delegateToken = subscriber.observe(route, delegate: delegate)
        let blockLog = ChangeLog()
        let blockToken = subscriber.observe(route) { blockLog.contentDidChange($0) }
        let stream = subscriber.changes(of: route)
        try await subscriber.waitUntilConnected(timeout: .seconds(30))

        let publisher = try harness.client(backend: backend)
        defer { publisher.close() }
        var positions: [StreamPosition] = []
        for change in taxiChanges("8812", count: 4) {
            positions.append(try await publisher.publish(change).position)
        }
        #expect(positions.map(\.offset) == [1, 2, 3, 4])

        let streamLog = ChangeLog()
        let sawAll = await iterate(stream) { change in
            streamLog.contentDidChange(change)
            return streamLog.lastOffset == 4
        }
        #expect(sawAll, "\(streamLog.offsets)")
        // A subscribe racing with the first publishes may see them in its snapshot; every offset exactly once.
        #expect(streamLog.coversExactlyOnce(upTo: 4), "\(streamLog.offsets)")
        #expect(await eventually { delegate.lastOffset == 4 && blockLog.lastOffset == 4 })
        #expect(delegate.coversExactlyOnce(upTo: 4) && blockLog.coversExactlyOnce(upTo: 4))
        #expect(delegate.all.last?.snapshot.state == "dispatching")
        #expect(delegate.all.last?.snapshot.fields.driverID == "d-2")
        delegateToken.cancel()
        blockToken.cancel()
    }

    @Test("the initial snapshot comes first, then every change once", arguments: SelectorBackend.allCases)
    func snapshotFirst(backend: SelectorBackend) async throws {
        let harness = try GatewayHarness()
        defer { harness.stop() }
        for change in taxiChanges("8812", count: 3) { try await harness.apply(change) }
        let client = try harness.client(backend: backend)
        defer { client.close() }
        let log = ChangeLog()
        let token = client.observe(route, delegate: log)
        defer { token.cancel() }
        #expect(await eventually { log.all.count == 1 })
        #expect(log.all.first?.kind == .snapshot)
        #expect(log.all.first?.snapshot.position.offset == 3)
        try await harness.apply(taxiChanges("8812", count: 4)[3])
        #expect(await eventually { log.offsets == [4] })
    }

    @Test("an illegal transition is refused with its typed error and changes nothing", arguments: SelectorBackend.allCases)
    func illegalTransition(backend: SelectorBackend) async throws {
        let harness = try GatewayHarness()
        defer { harness.stop() }
        let client = try harness.client(backend: backend)
        defer { client.close() }
        _ = try await client.publish(OrderChange(orderID: OrderID("1")!, line: .taxi, targetState: "created"))
        do {
            _ = try await client.publish(OrderChange(orderID: OrderID("1")!, line: .taxi, targetState: "paid"))
            Issue.record("illegal transition accepted")
        } catch .refused(let error) {
            #expect(error.code == .illegalTransition)
            #expect(error.message.contains("allowed next: dispatching, cancelled"))
        } catch {
            Issue.record("unexpected \(error)")
        }
        let snapshot = try harness.running.writer.readAndWait { (store) throws(StoreError) in
            try store.snapshot(of: .taxi, OrderID("1")!)
        }
        #expect(snapshot?.state == "created")
        #expect(snapshot?.position.offset == 1)
    }

    @Test("the same idempotency key twice stores once and returns the first result", arguments: SelectorBackend.allCases)
    func idempotentPublish(backend: SelectorBackend) async throws {
        let harness = try GatewayHarness()
        defer { harness.stop() }
        let client = try harness.client(backend: backend)
        defer { client.close() }
        let change = OrderChange(orderID: OrderID("7")!, line: .taxi, targetState: "created", idempotencyKey: "k-7")
        let first = try await client.publish(change)
        let second = try await client.publish(change)
        #expect(!first.deduplicated)
        #expect(second.deduplicated)
        #expect(first.position == second.position)
    }

    @Test("a client whose socket dies mid-stream recovers every record once, in order", arguments: SelectorBackend.allCases)
    func recoveryAfterSocketLoss(backend: SelectorBackend) async throws {
        let harness = try GatewayHarness()
        defer { harness.stop() }
        let subscriber = try harness.client(backend: backend)
        defer { subscriber.close() }
        let log = ChangeLog()
        let token = subscriber.observe(route, delegate: log)
        defer { token.cancel() }
        try await subscriber.waitUntilConnected(timeout: .seconds(30))
        let changes = taxiChanges("8812", count: 60)
        for (index, change) in changes.enumerated() {
            try await harness.apply(change)
            if index == 20 || index == 40 {
                // Cut the socket once the client holds a position (it has this record), so the reconnect resumes
                // from it: on a loaded machine both cuts could otherwise land before the first subscribe was answered.
                #expect(await eventually(timeout: .seconds(30)) { log.lastOffset >= UInt64(index + 1) })
                subscriber.simulateNetworkLoss()
            }
        }
        #expect(await eventually(timeout: .seconds(30)) { log.lastOffset >= 60 })
        #expect(log.coversExactlyOnce(upTo: 60), "\(log.offsets)")
        #expect(harness.running.gateway.counters.snapshot.recoveries >= 1)
    }

    @Test("a server restart on SQLite is recovered from the client's last position", arguments: SelectorBackend.allCases)
    func recoveryAcrossServerRestart(backend: SelectorBackend) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("longlink-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = StoreSpecification.sqlite(path: directory.appendingPathComponent("orders.sqlite").path)
        var harness = try GatewayHarness(store: store)
        let port = harness.port
        let subscriber = try harness.client(backend: backend)
        defer { subscriber.close() }
        let log = ChangeLog()
        let token = subscriber.observe(route, delegate: log)
        defer { token.cancel() }
        try await subscriber.waitUntilConnected(timeout: .seconds(30))
        let changes = taxiChanges("8812", count: 20)
        for change in changes[0..<10] { try await harness.apply(change) }
        #expect(await eventually { log.lastOffset == 10 })
        harness.stop()
        harness = try GatewayHarness(store: store, port: port)
        defer { harness.stop() }
        for change in changes[10...] { try await harness.apply(change) }
        #expect(await eventually(timeout: .seconds(15)) { log.lastOffset >= 20 })
        #expect(log.coversExactlyOnce(upTo: 20), "\(log.offsets)")
        #expect(!log.all.contains { $0.kind == .resync })
    }

    @Test("a stalled reader is cut as slow while 100 other subscribers receive everything", arguments: FlushMode.allCases)
    func stalledReaderIsCut(flush: FlushMode) async throws {
        let harness = try GatewayHarness(outboundLimit: 64 * 1024, socketSendBuffer: 32 * 1024, flush: flush)
        defer { harness.stop() }
        let stalled = try RawPeer(port: harness.port, receiveBuffer: 4096)
        try stalled.handshake()
        _ = try stalled.subscribe(route)
        let others = try subscribedPeers(100, harness)
        let payload = [UInt8](repeating: 0x5A, count: 8 * 1024)
        var changes = taxiChanges("8812", count: 80)
        for index in changes.indices { changes[index].fields.payload = payload }
        // Healthy readers read each record as it comes; only the stalled one falls behind.
        var received = 0
        for change in changes {
            try await harness.apply(change)
            for peer in others where try peer.next(pushFrame) != nil { received += 1 }
        }
        #expect(received == 100 * changes.count)
        #expect((try stalled.next(timeout: .seconds(5), disconnectFrame)?.code == .slow) || stalled.eof)
        #expect(await eventually { harness.running.gateway.counters.snapshot.slowDisconnects == 1 })
        // Counted when cut; closed once its disconnect is flushed, or by the forced close a second later when the
        // stalled socket takes nothing.
        #expect(await eventually { harness.running.gateway.counters.snapshot.connections == 100 })
    }

    @Test(
        "a route's subscribers each get every record once while their list grows past and shrinks below its indexed size",
        arguments: FlushMode.allCases
    )
    func subscriberListGrowsAndShrinks(flush: FlushMode) async throws {
        let harness = try GatewayHarness(flush: flush)
        defer { harness.stop() }
        let peers = try subscribedPeers(60, harness)
        // Leave in an order unlike the joins, down to a few per loop (the hub drops its positions there).
        let leaving = peers.indices.filter { $0 % 10 != 3 }
        for index in leaving.reversed() { peers[index].close() }
        var staying = peers.indices.filter { $0 % 10 == 3 }.map { peers[$0] }
        #expect(await eventually { harness.running.gateway.counters.snapshot.connections == staying.count })
        let changes = taxiChanges("8812", count: 2)
        try await harness.apply(changes[0])
        for peer in staying { #expect(try peer.next(pushFrame)?.record.position.offset == 1) }
        staying += try subscribedPeers(40, harness)
        try await harness.apply(changes[1])
        for peer in staying { #expect(try peer.next(pushFrame)?.record.position.offset == 2) }
        for peer in staying { #expect(try peer.next(timeout: .milliseconds(20), pushFrame) == nil) }
    }

    @Test("flush = ring writes many subscribers with one system call; flush = each uses no ring", arguments: FlushMode.allCases)
    func flushModeSendsThroughTheRingOrNot(flush: FlushMode) async throws {
        let harness = try GatewayHarness(loops: 1, flush: flush)
        defer { harness.stop() }
        let peers = try subscribedPeers(50, harness)
        let before = harness.running.gateway.counters.snapshot
        #expect(before.flushRingLoops == (flush == .ring ? 1 : 0), "loops with a send ring: \(before.flushRingLoops)")
        for change in taxiChanges("8812", count: 3) { try await harness.apply(change) }
        for peer in peers {
            for offset in UInt64(1)...3 { #expect(try peer.next(pushFrame)?.record.position.offset == offset) }
        }
        let after = harness.running.gateway.counters.snapshot
        let submissions = after.flushSubmissions - before.flushSubmissions
        let sends = after.flushRingSends - before.flushRingSends
        switch flush {
        case .ring:
            // 50 subscribers × 3 records, one loop: each record's pushes leave together, far fewer calls than writes.
            #expect(sends >= 150 / 3 && submissions >= 1 && submissions * 10 <= sends, "\(submissions) submissions, \(sends) sends")
        case .each:
            #expect(submissions == 0 && sends == 0)
        }
    }

    @Test("under the coalesce policy a stalled reader keeps only the newest record, marked skipped", arguments: FlushMode.allCases)
    func stalledReaderIsCoalesced(flush: FlushMode) async throws {
        let harness = try GatewayHarness(outboundLimit: 32 * 1024, slowPolicy: .coalesce, socketSendBuffer: 16 * 1024, flush: flush)
        defer { harness.stop() }
        let stalled = try RawPeer(port: harness.port, receiveBuffer: 4096)
        try stalled.handshake()
        _ = try stalled.subscribe(route)
        let payload = [UInt8](repeating: 0x33, count: 8 * 1024)
        var changes = taxiChanges("8812", count: 60)
        for index in changes.indices { changes[index].fields.payload = payload }
        for change in changes { try await harness.apply(change) }
        #expect(await eventually { harness.running.gateway.counters.snapshot.coalescedRecords > 0 })
        var offsets: [UInt64] = []
        var skipped = false
        while let push = try stalled.next(timeout: .seconds(3), pushFrame) {
            offsets.append(push.record.position.offset)
            if push.skippedBefore { skipped = true }
            if push.record.position.offset == 60 { break }
        }
        #expect(skipped)
        #expect(offsets.last == 60)
        #expect(offsets == offsets.sorted())
        #expect(offsets.count < 60)
        #expect(harness.running.gateway.counters.snapshot.connections == 1)
    }

    @Test("a silent peer is closed with heartbeat_timeout")
    func heartbeatTimeout() async throws {
        let harness = try GatewayHarness(pingMillis: 200, pongMillis: 200)
        defer { harness.stop() }
        let peer = try RawPeer(port: harness.port)
        let connected = try peer.handshake()
        #expect(connected?.pingIntervalMillis == 200)
        let ping = try peer.next { if case .ping = $0 { true } else { nil } }
        #expect(ping == true)
        let disconnect = try peer.next(disconnectFrame)
        #expect(disconnect?.code == .heartbeatTimeout)
        #expect(try peer.closedByServer())
    }

    @Test("answering pings keeps a connection alive")
    func heartbeatAnswered() async throws {
        // A ping every 100 ms; a peer silent for 100 + 1,000 ms is cut. Answering for 25 pings (2.5 s, twice the
        // silence limit) proves the answers keep it alive, while a test thread descheduled for most of a second on
        // a loaded machine still answers in time.
        let harness = try GatewayHarness(pingMillis: 100, pongMillis: 1_000)
        defer { harness.stop() }
        let peer = try RawPeer(port: harness.port)
        try peer.handshake()
        var pings = 0
        while pings < 25 {
            guard let frame = try peer.next(timeout: .seconds(2)) else { break }
            if case .ping = frame {
                pings += 1
                try peer.send(.pong)
            }
            if case .disconnect(let d) = frame { Issue.record("disconnected: \(d)") }
        }
        #expect(pings == 25)
    }

    @Test("a peer that never sends connect is closed with handshake_timeout")
    func handshakeTimeout() async throws {
        let harness = try GatewayHarness(handshakeMillis: 200)
        defer { harness.stop() }
        let peer = try RawPeer(port: harness.port)
        let disconnect = try peer.next(disconnectFrame)
        #expect(disconnect?.code == .handshakeTimeout)
        #expect(try peer.closedByServer())
    }

    @Test("garbage closes only the offending connection with protocol_violation")
    func garbage() async throws {
        let harness = try GatewayHarness()
        defer { harness.stop() }
        let good = try RawPeer(port: harness.port)
        try good.handshake()
        _ = try good.subscribe(route)
        let bad = try RawPeer(port: harness.port)
        try bad.handshake()
        try bad.sendRaw([0x05, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
        #expect(try bad.next(disconnectFrame)?.code == .protocolViolation)
        let huge = try RawPeer(port: harness.port)
        try huge.sendRaw([0xFF, 0xFF, 0xFF, 0xFF, 0x0F])
        #expect(try huge.next(disconnectFrame)?.code == .frameTooLarge)
        try await harness.apply(taxiChanges("8812", count: 1)[0])
        #expect(try good.next(pushFrame)?.record.position.offset == 1)
    }

    @Test("a frame split across reads stays with its connection while others read through the loop's spare buffer")
    func splitFrameWhileOthersRead() async throws {
        let harness = try GatewayHarness()
        defer { harness.stop() }
        let split = try RawPeer(port: harness.port)
        try split.handshake()
        let bytes = try RawPeer.bytes(.subscribe(SubscribeRequest(requestID: 7, route: route.text, since: nil)))
        try split.sendRaw(Array(bytes.prefix(bytes.count / 2)))
        // Others read and drain their buffers on every loop meanwhile (enough peers to cover each loop).
        var others: [RawPeer] = []
        for index in 0..<8 {
            let other = try RawPeer(port: harness.port)
            try other.handshake()
            let otherRoute = Route.order(.taxi, OrderID("split-\(index)")!)
            #expect(try other.subscribe(otherRoute, requestID: 3)?.route == otherRoute)
            others.append(other)
        }
        try split.sendRaw(Array(bytes.dropFirst(bytes.count / 2)))
        let subscribed = try split.next { frame -> Subscribed? in
            if case .subscribed(let subscribed) = frame { subscribed } else { nil }
        }
        #expect(subscribed?.requestID == 7)
        #expect(subscribed?.route == route)
        try await harness.apply(taxiChanges("8812", count: 1)[0])
        #expect(try split.next(pushFrame)?.record.position.offset == 1)
    }

    @Test("drain sends shutdown with a reconnect delay within the drain period to everyone")
    func drain() async throws {
        let harness = try GatewayHarness(drainPeriod: .milliseconds(400))
        var peers: [RawPeer] = []
        for _ in 0..<20 {
            let peer = try RawPeer(port: harness.port)
            try peer.handshake()
            peers.append(peer)
        }
        harness.stop()
        for peer in peers {
            let disconnect = try peer.next(disconnectFrame)
            #expect(disconnect?.code == .shutdown)
            #expect((disconnect?.reconnectAfterMillis ?? 9_999) <= 400)
            #expect(try peer.closedByServer())
        }
        #expect(harness.running.gateway.currentState == .stopped)
    }

    @Test("1,000 concurrent connections subscribe and all receive one publish")
    func thousandConnections() async throws {
        let harness = try GatewayHarness()
        defer { harness.stop() }
        var peers: [RawPeer] = []
        for _ in 0..<1_000 {
            let peer = try RawPeer(port: harness.port)
            try peer.send(.connect(ConnectRequest()))
            try peer.send(.subscribe(SubscribeRequest(requestID: 1, route: route.text)))
            peers.append(peer)
        }
        for peer in peers {
            #expect(try peer.next { if case .subscribed = $0 { true } else { nil } } == true)
        }
        #expect(harness.running.gateway.counters.snapshot.connections == 1_000)
        try await harness.apply(taxiChanges("8812", count: 1)[0])
        var received = 0
        for peer in peers where try peer.next(pushFrame)?.record.position.offset == 1 { received += 1 }
        #expect(received == 1_000)
    }

    @Test("connections beyond the limit are refused with too_many_connections")
    func connectionLimit() async throws {
        let harness = try GatewayHarness(maxConnections: 3)
        defer { harness.stop() }
        var peers: [RawPeer] = []
        for _ in 0..<3 {
            let peer = try RawPeer(port: harness.port)
            try peer.handshake()
            peers.append(peer)
        }
        let extra = try RawPeer(port: harness.port)
        #expect(try extra.next(disconnectFrame)?.code == .tooManyConnections)
        #expect(try extra.closedByServer())
    }

    @Test("a publisher that asks for receipts hears when a subscriber acked the record", arguments: SelectorBackend.allCases)
    func deliveryReceipts(backend: SelectorBackend) async throws {
        let harness = try GatewayHarness()
        defer { harness.stop() }
        let subscriber = try harness.client(backend: backend)
        defer { subscriber.close() }
        let log = ChangeLog()
        // Publish only once the subscribe was answered: a record committed while the subscribe's read is queued
        // arrives in the snapshot, not as a push, and a snapshot is not acked (the gateway counts the subscription
        // as soon as the request arrives).
        let active = Mutex(false)
        subscriber.onSubscribed { subscribed, _ in if subscribed == route { active.withLock { $0 = true } } }
        let token = subscriber.observe(route, delegate: log)
        defer { token.cancel() }
        try await subscriber.waitUntilConnected(timeout: .seconds(30))
        #expect(await eventually(timeout: .seconds(30)) { active.withLock { $0 } })
        let publisher = try harness.client(backend: backend)
        defer { publisher.close() }
        let receipts = publisher.receipts()
        let receipt = try await publisher.publish(taxiChanges("8812", count: 1)[0], wantsReceipts: true)
        let heardBox = Mutex<DeliveryReceipt?>(nil)
        #expect(await iterate(receipts) { delivery in
            heardBox.withLock { $0 = delivery }
            return true
        })
        let heard = heardBox.withLock { $0 }
        #expect(heard?.position == receipt.position)
        #expect(heard?.route == route)
        #expect(heard?.ackedCount == 1)
    }
}
