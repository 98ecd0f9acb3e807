import LonglinkClient
import LonglinkCore
import LonglinkTestSupport
import Testing

@Suite("ClientSession", .ownThreads)
struct ClientSessionTests {
    let route = Route.order(.taxi, OrderID("8812")!)

    func record(_ offset: UInt64, from: OrderState? = "dispatching", to: OrderState = "driver_assigned", epoch: UInt32 = 3)
        -> OrderChangeRecord
    {
        OrderChangeRecord(
            orderID: OrderID("8812")!,
            line: .taxi,
            fromState: from,
            toState: to,
            fields: OrderFields(etaSeconds: UInt32(offset)),
            position: StreamPosition(epoch: epoch, offset: offset),
            timestampMillis: offset
        )
    }

    func snapshot(_ offset: UInt64, epoch: UInt32 = 3) -> OrderSnapshot {
        OrderSnapshot(
            orderID: OrderID("8812")!,
            line: .taxi,
            state: "dispatching",
            fields: .none,
            position: StreamPosition(epoch: epoch, offset: offset),
            createdAtMillis: 0,
            updatedAtMillis: offset
        )
    }

    func connect(_ session: inout ClientSession) -> [ClientSession.Event] {
        _ = session.transportConnected()
        return session.receive(
            .connected(
                Connected(
                    clientID: "c",
                    nodeID: "n",
                    pingIntervalMillis: 25_000,
                    pongTimeoutMillis: 10_000,
                    maxFrameSize: 65_536,
                    maxSubscriptions: 10
                )
            )
        )
    }

    func subscribeID(_ events: [ClientSession.Event]) -> (UInt32, StreamPosition?)? {
        for case .send(.subscribe(let request)) in events { return (request.requestID, request.since) }
        return nil
    }

    func notified(_ events: [ClientSession.Event]) -> [ContentChange] {
        events.compactMap { if case .notify(let change) = $0 { change } else { nil } }
    }

    @Test("connect sends the token; routes wanted before connecting are subscribed after connected")
    func connectThenSubscribe() {
        var session = ClientSession(token: "t0k")
        #expect(session.want(route) == nil)
        let first = session.transportConnected()
        guard case .send(.connect(let request)) = first.first else {
            Issue.record("expected connect")
            return
        }
        #expect(request.token == "t0k")
        let events = connect(&session)
        #expect(subscribeID(events)?.1 == nil)
    }

    @Test("the initial snapshot comes first, then pushes; duplicates are dropped")
    func snapshotThenPushes() {
        var session = ClientSession(token: "")
        _ = connect(&session)
        guard case .subscribe(let request) = session.want(route) else {
            Issue.record("expected subscribe")
            return
        }
        let subscribed = session.receive(
            .subscribed(Subscribed(requestID: request.requestID, route: route, snapshot: snapshot(2), position: snapshot(2).position, recovered: false))
        )
        #expect(notified(subscribed).map(\.kind) == [.snapshot])
        #expect(subscribed.last == .subscriptionActive(route, recovered: false), "a first subscribe is not a recovery")
        #expect(notified(session.receive(.push(Push(route: route, record: record(2))))).isEmpty)
        let third = notified(session.receive(.push(Push(route: route, record: record(3)))))
        #expect(third.count == 1)
        #expect(third.first?.snapshot.state == "driver_assigned")
        #expect(third.first?.snapshot.fields.etaSeconds == 3)
        #expect(notified(session.receive(.push(Push(route: route, record: record(3))))).isEmpty)
        #expect(session.pendingAcks() == [.ack(Ack(route: route.text, offset: 3))])
        #expect(session.pendingAcks().isEmpty)
    }

    @Test("after a reconnect the client resumes from its position; recovered records are delivered once")
    func resume() {
        var session = ClientSession(token: "")
        _ = connect(&session)
        guard case .subscribe(let request) = session.want(route) else { return }
        _ = session.receive(.subscribed(Subscribed(requestID: request.requestID, route: route, snapshot: snapshot(2), position: snapshot(2).position, recovered: false)))
        _ = session.receive(.push(Push(route: route, record: record(3))))
        session.connectionLost()
        let reconnected = connect(&session)
        guard let (id, since) = subscribeID(reconnected) else {
            Issue.record("expected a resubscribe")
            return
        }
        #expect(since == StreamPosition(epoch: 3, offset: 3))
        let recovered = session.receive(
            .subscribed(Subscribed(requestID: id, route: route, snapshot: nil, position: record(5).position, recovered: true, missed: [record(3), record(4), record(5)]))
        )
        #expect(notified(recovered).map(\.record.position.offset) == [4, 5])
        #expect(notified(recovered).allSatisfy { $0.kind == .change })
        #expect(recovered.last == .subscriptionActive(route, recovered: true))
        #expect(session.position(of: route)?.offset == 5)
    }

    @Test("an unrecoverable gap is reported as a resync with the fresh snapshot")
    func resync() {
        var session = ClientSession(token: "")
        _ = connect(&session)
        guard case .subscribe(let request) = session.want(route) else { return }
        _ = session.receive(.subscribed(Subscribed(requestID: request.requestID, route: route, snapshot: snapshot(2), position: snapshot(2).position, recovered: false)))
        session.connectionLost()
        guard let (id, _) = subscribeID(connect(&session)) else { return }
        let events = session.receive(
            .subscribed(Subscribed(requestID: id, route: route, snapshot: snapshot(1, epoch: 9), position: snapshot(1, epoch: 9).position, recovered: false))
        )
        #expect(notified(events).map(\.kind) == [.resync])
        #expect(events.last == .subscriptionActive(route, recovered: false), "a resync is not a recovery")
        #expect(session.position(of: route) == StreamPosition(epoch: 9, offset: 1))
    }

    @Test("a refused subscribe forgets the route; server pings are answered")
    func refusals() {
        var session = ClientSession(token: "")
        _ = connect(&session)
        guard case .subscribe(let request) = session.want(route) else { return }
        _ = session.receive(.error(ErrorFrame(requestID: request.requestID, code: .permissionDenied, message: "no")))
        #expect(session.wantedRoutes.isEmpty)
        #expect(session.receive(.ping) == [.send(.pong)])
    }

    @Test("full-jitter backoff stays within its exponential bound and the cap")
    func backoff() {
        var generator = SystemRandomNumberGenerator()
        let policy = ReconnectPolicy.foreground
        #expect(policy.bound(attempt: 0) == .milliseconds(250))
        #expect(policy.bound(attempt: 3) == .seconds(2))
        #expect(policy.bound(attempt: 40) == .seconds(8))
        for attempt in 0..<50 {
            let delay = policy.delay(attempt: attempt, using: &generator)
            #expect(delay >= .zero && delay <= policy.bound(attempt: attempt))
        }
        #expect(ApplicationState.background.reconnectPolicy.cap > ApplicationState.foreground.reconnectPolicy.cap)
    }
}
