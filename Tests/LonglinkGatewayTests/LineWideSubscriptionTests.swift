import LonglinkCore
import LonglinkGateway
import LonglinkTestSupport
import Testing

/// `subscribe order://taxi/*` in the protocol state machine: allowed only when the token's routes cover the whole
/// line; live-only (`recovered = false`, no snapshot); every order of the line delivered, other lines not.
@Suite("Line-wide subscriptions in PeerStateMachine", .ownThreads)
struct LineWideSubscriptionTests {
    let settings = PeerSettings(nodeID: "node-1", maxSubscriptions: 4, maxViolations: 10)
    let line = Route.lineWide(.order, "taxi")

    func connected(_ token: String) -> PeerStateMachine {
        var peer = PeerStateMachine(clientID: "c1", settings: settings, authorizer: TableAuthorizer(), nowMillis: 0)
        peer.transportReady(nowMillis: 0)
        _ = peer.receive(.connect(ConnectRequest(token: token)), nowMillis: 0)
        return peer
    }

    func record(_ order: String, line: BusinessLine = .taxi, offset: UInt64) -> OrderChangeRecord {
        OrderChangeRecord(
            orderID: OrderID(order)!, line: line, fromState: "created", toState: "dispatching", fields: .none,
            position: StreamPosition(epoch: 7, offset: offset), timestampMillis: 1
        )
    }

    @Test("a token's routes must cover the whole line", arguments: [
        ("sub:order://taxi/*", true), ("sub:order://*", true), ("admin", true),
        ("sub:order://taxi/8812", false), ("sub:order://express/*", false), ("pub", true),
    ])
    func scope(token: String, allowed: Bool) {
        var peer = connected(token)
        let actions = peer.receive(.subscribe(SubscribeRequest(requestID: 5, route: "order://taxi/*")), nowMillis: 1)
        if allowed {
            #expect(actions == [.subscribe(line, since: nil, requestID: 5)], "\(actions)")
        } else {
            #expect(actions.count == 1)
            guard case .send(.error(let error)) = actions.first else { Issue.record("expected an error: \(actions)"); return }
            #expect(error.code == .permissionDenied && error.requestID == 5)
        }
    }

    @Test("live-only: subscribed has no snapshot and recovered = false, even with a position; then every order of the line")
    func liveOnly() {
        var peer = connected("sub:order://taxi/*")
        _ = peer.receive(
            .subscribe(SubscribeRequest(requestID: 1, route: "order://taxi/*", since: StreamPosition(epoch: 7, offset: 3))),
            nowMillis: 1
        )
        // Records arriving before the broker confirmed are held, then follow `subscribed`.
        #expect(peer.deliver(record("a1", offset: 4), on: line) == .held)
        let actions = peer.subscribeCompleted(route: line, read: SubscribeRead(epoch: 0, snapshot: nil, history: nil))
        guard case .send(.subscribed(let subscribed)) = actions.first else { Issue.record("\(actions)"); return }
        #expect(subscribed.recovered == false && subscribed.snapshot == nil && subscribed.missed.isEmpty)
        #expect(subscribed.route == line)
        guard actions.count == 2, case .send(.push(let held)) = actions[1] else { Issue.record("\(actions)"); return }
        #expect(held.route == Route.order(.taxi, OrderID("a1")!), "pushes name the order's route")
        // Different orders with lower offsets than the last push still go out: positions are per order.
        #expect(peer.deliver(record("b2", offset: 1), on: line) == .send)
        #expect(peer.deliver(record("a1", offset: 5), on: line) == .send)
        #expect(peer.deliver(record("c3", offset: 1), on: Route.lineWide(.order, "express")) == .ignore)
        let unsubscribed = peer.receive(.unsubscribe(UnsubscribeRequest(requestID: 2, route: "order://taxi/*")), nowMillis: 2)
        #expect(unsubscribed.first == .unsubscribe(line))
    }

    @Test("parsing: order://taxi/* is line-wide and covers taxi orders only; order ids cannot contain *")
    func parsing() throws {
        let parsed = try Route(parsingSubscription: "order://taxi/*")
        #expect(parsed == line && parsed.isLineWide && parsed.text == "order://taxi/*")
        #expect(parsed.lineCovers(.order(.taxi, OrderID("8812")!)))
        #expect(!parsed.lineCovers(.order(BusinessLine("taxi2")!, OrderID("8812")!)))
        #expect(!parsed.lineCovers(.order(.express, OrderID("8812")!)))
        #expect(!Route.order(.taxi, OrderID("8812")!).isLineWide)
        #expect(throws: RouteError.self) { try Route(parsing: "order://taxi/*") }
        #expect(throws: RouteError.self) { try Route(parsingSubscription: "order://Taxi/*") }
    }
}
