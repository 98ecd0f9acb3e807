import LonglinkTestSupport
import LonglinkCore
import LonglinkGateway
import Testing

/// An authorizer for tests: token "admin", "pub", "sub:<pattern>", "exp:<millis>"; anything else is invalid.
struct TableAuthorizer: Authorizer {
    func authenticate(token: String, nowMillis: UInt64) throws(AuthorizationError) -> Principal {
        if token == "admin" { return Principal(userID: "ops", role: .admin, routes: [.all]) }
        if token == "pub" { return Principal(userID: "backend", role: .publisher, routes: [try! RoutePattern(parsing: "order://taxi/*")]) }
        if token.hasPrefix("sub:") {
            let pattern = try! RoutePattern(parsing: String(token.dropFirst(4)))
            return Principal(userID: "rider", role: .subscriber, routes: [pattern])
        }
        if token.hasPrefix("exp:") {
            let expiry = UInt64(token.dropFirst(4))!
            if nowMillis >= expiry { throw .expired }
            return Principal(userID: "rider", role: .subscriber, routes: [.all], expiresAtMillis: expiry)
        }
        throw .invalidToken("unknown test token")
    }
}

@Suite("PeerStateMachine", .ownThreads)
struct PeerStateMachineTests {
    let settings = PeerSettings(
        nodeID: "node-1",
        pingIntervalMillis: 1_000,
        pongTimeoutMillis: 500,
        handshakeTimeoutMillis: 2_000,
        maxSubscriptions: 2,
        maxViolations: 3,
        tokenWarningLeadMillis: 100
    )
    let route = Route.order(.taxi, OrderID("8812")!)

    func connected(token: String = "admin", now: UInt64 = 0) -> PeerStateMachine {
        var peer = PeerStateMachine(clientID: "c1", settings: settings, authorizer: TableAuthorizer(), nowMillis: now)
        peer.transportReady(nowMillis: now)
        let actions = peer.receive(.connect(ConnectRequest(token: token)), nowMillis: now)
        #expect(actions.count == 1)
        guard case .send(.connected(let connected)) = actions.first else {
            Issue.record("expected connected, got \(actions)")
            return peer
        }
        #expect(connected.nodeID == "node-1")
        #expect(connected.pingIntervalMillis == 1_000)
        #expect(peer.phase == .active)
        return peer
    }

    func record(_ offset: UInt64, epoch: UInt32 = 7) -> OrderChangeRecord {
        OrderChangeRecord(
            orderID: OrderID("8812")!,
            line: .taxi,
            fromState: "dispatching",
            toState: "driver_assigned",
            fields: .none,
            position: StreamPosition(epoch: epoch, offset: offset),
            timestampMillis: 1
        )
    }

    func closeCode(_ actions: [PeerAction]) -> DisconnectCode? {
        for case .close(let disconnect) in actions { return disconnect.code }
        return nil
    }

    @Test("a frame before connect gets an error frame and a protocol-violation close")
    func frameBeforeConnect() {
        var peer = PeerStateMachine(clientID: "c1", settings: settings, authorizer: TableAuthorizer(), nowMillis: 0)
        peer.transportReady(nowMillis: 0)
        let actions = peer.receive(.subscribe(SubscribeRequest(requestID: 1, route: route.text)), nowMillis: 1)
        guard case .send(.error(let error)) = actions.first else {
            Issue.record("expected an error frame first, got \(actions)")
            return
        }
        #expect(error.code == .badRequest)
        #expect(closeCode(actions) == .protocolViolation)
        #expect(peer.phase == .draining)
    }

    @Test("a bad token closes with invalid_token, an expired one with token_expired")
    func badTokens() {
        var peer = PeerStateMachine(clientID: "c1", settings: settings, authorizer: TableAuthorizer(), nowMillis: 0)
        peer.transportReady(nowMillis: 0)
        #expect(closeCode(peer.receive(.connect(ConnectRequest(token: "forged")), nowMillis: 0)) == .invalidToken)
        var expired = PeerStateMachine(clientID: "c2", settings: settings, authorizer: TableAuthorizer(), nowMillis: 0)
        expired.transportReady(nowMillis: 0)
        #expect(closeCode(expired.receive(.connect(ConnectRequest(token: "exp:5")), nowMillis: 10)) == .tokenExpired)
        var version = PeerStateMachine(clientID: "c3", settings: settings, authorizer: TableAuthorizer(), nowMillis: 0)
        version.transportReady(nowMillis: 0)
        #expect(
            closeCode(version.receive(.connect(ConnectRequest(protocolVersion: 9, token: "admin")), nowMillis: 0))
                == .unsupportedProtocol
        )
    }

    @Test("subscribe holds pushes until the snapshot, then sends only newer records, in order")
    func subscribeWithoutGapOrDuplicate() {
        var peer = connected()
        let actions = peer.receive(.subscribe(SubscribeRequest(requestID: 4, route: route.text)), nowMillis: 1)
        #expect(actions == [.subscribe(route, since: nil, requestID: 4)])
        #expect(peer.deliver(record(3), on: route) == .held)
        #expect(peer.deliver(record(4), on: route) == .held)
        let snapshot = OrderSnapshot(
            orderID: OrderID("8812")!,
            line: .taxi,
            state: "driver_assigned",
            fields: .none,
            position: StreamPosition(epoch: 7, offset: 3),
            createdAtMillis: 0,
            updatedAtMillis: 0
        )
        let done = peer.subscribeCompleted(route: route, read: SubscribeRead(epoch: 7, snapshot: snapshot, history: nil))
        #expect(done.count == 2)
        guard case .send(.subscribed(let subscribed)) = done[0], case .send(.push(let push)) = done[1] else {
            Issue.record("expected subscribed then push, got \(done)")
            return
        }
        #expect(subscribed.position.offset == 3)
        #expect(subscribed.requestID == 4)
        #expect(push.record.position.offset == 4)
        #expect(peer.deliver(record(4), on: route) == .ignore)
        #expect(peer.deliver(record(5), on: route) == .send)
        #expect(peer.deliver(record(5), on: route) == .ignore)
        #expect(peer.deliver(record(1, epoch: 8), on: route) == .send)
    }

    @Test("a resume within retained history is recovered; an expired one is not")
    func recovery() {
        var peer = connected()
        let since = StreamPosition(epoch: 7, offset: 2)
        _ = peer.receive(.subscribe(SubscribeRequest(requestID: 1, route: route.text, since: since)), nowMillis: 1)
        let done = peer.subscribeCompleted(
            route: route,
            read: SubscribeRead(epoch: 7, snapshot: nil, history: .records([record(3), record(4)]))
        )
        guard case .send(.subscribed(let subscribed)) = done.first else {
            Issue.record("expected subscribed")
            return
        }
        #expect(subscribed.recovered)
        #expect(subscribed.missed.map(\.position.offset) == [3, 4])
        #expect(subscribed.position.offset == 4)

        var other = connected()
        _ = other.receive(.subscribe(SubscribeRequest(requestID: 1, route: route.text, since: since)), nowMillis: 1)
        let expired = other.subscribeCompleted(route: route, read: SubscribeRead(epoch: 9, snapshot: nil, history: .expired))
        guard case .send(.subscribed(let notRecovered)) = expired.first else {
            Issue.record("expected subscribed")
            return
        }
        #expect(!notRecovered.recovered)
        #expect(notRecovered.missed.isEmpty)
    }

    @Test("bad routes, duplicates and the subscription limit fail only that request")
    func subscribeRefusals() {
        var peer = connected()
        func code(_ actions: [PeerAction]) -> ErrorCode? {
            for case .send(.error(let error)) in actions { return error.code }
            return nil
        }
        #expect(code(peer.receive(.subscribe(SubscribeRequest(requestID: 1, route: "taxi/1")), nowMillis: 1)) == .malformedRoute)
        #expect(code(peer.receive(.subscribe(SubscribeRequest(requestID: 2, route: "chat://a/b")), nowMillis: 1)) == .unknownRouteKind)
        _ = peer.receive(.subscribe(SubscribeRequest(requestID: 3, route: route.text)), nowMillis: 1)
        #expect(code(peer.receive(.subscribe(SubscribeRequest(requestID: 4, route: route.text)), nowMillis: 1)) == .alreadySubscribed)
        _ = peer.receive(.subscribe(SubscribeRequest(requestID: 5, route: "order://taxi/2")), nowMillis: 1)
        #expect(code(peer.receive(.subscribe(SubscribeRequest(requestID: 6, route: "order://taxi/3")), nowMillis: 1)) == .tooManySubscriptions)
        #expect(code(peer.receive(.unsubscribe(UnsubscribeRequest(requestID: 7, route: "order://taxi/9")), nowMillis: 1)) == .notSubscribed)
        let unsubscribed = peer.receive(.unsubscribe(UnsubscribeRequest(requestID: 8, route: route.text)), nowMillis: 1)
        #expect(unsubscribed.first == .unsubscribe(route))
        #expect(peer.phase == .active)
    }

    @Test("out-of-scope subscribes and publishes without the role are refused; repeated ones disconnect")
    func permissions() {
        var peer = connected(token: "sub:order://taxi/8812")
        #expect(peer.receive(.subscribe(SubscribeRequest(requestID: 1, route: route.text)), nowMillis: 1).first
            == .subscribe(route, since: nil, requestID: 1))
        let denied = peer.receive(.subscribe(SubscribeRequest(requestID: 2, route: "order://taxi/1")), nowMillis: 1)
        #expect(closeCode(denied) == nil)
        let publish = PublishRequest(requestID: 3, orderID: "1", line: "taxi", targetState: "created")
        #expect(closeCode(peer.receive(.publish(publish), nowMillis: 1)) == nil)
        let third = peer.receive(.subscribe(SubscribeRequest(requestID: 4, route: "order://taxi/2")), nowMillis: 1)
        #expect(closeCode(third) == .forbidden)
        #expect(third.contains(.unsubscribe(route)))
    }

    @Test("publish validates ids and hands a well-formed change to the store")
    func publish() {
        var peer = connected(token: "pub")
        let good = PublishRequest(requestID: 9, orderID: "8812", line: "taxi", targetState: "created", idempotencyKey: "k")
        guard case .publish(let change, let requestID, _) = peer.receive(.publish(good), nowMillis: 1).first else {
            Issue.record("expected publish action")
            return
        }
        #expect(requestID == 9)
        #expect(change.route == route)
        #expect(change.idempotencyKey == "k")
        let bad = PublishRequest(requestID: 10, orderID: "no spaces", line: "taxi", targetState: "created")
        guard case .send(.publishResult(let result)) = peer.receive(.publish(bad), nowMillis: 1).first,
            case .refused(let error) = result.outcome
        else {
            Issue.record("expected a refused publish result")
            return
        }
        #expect(error.code == .invalidField)
        let refused = peer.publishCompleted(
            requestID: 11,
            result: .failure(.illegalTransition(line: .taxi, order: OrderID("1")!, from: "paid", to: "created", allowed: []))
        )
        guard case .send(.publishResult(let illegal)) = refused.first, case .refused(let illegalError) = illegal.outcome else {
            Issue.record("expected refused")
            return
        }
        #expect(illegalError.code == .illegalTransition)
        #expect(peer.phase == .active)
    }

    @Test("receivePublish and publishResult decide exactly as receive(.publish) and publishCompleted")
    func publishFastPathMatchesActions() {
        let requests = [
            PublishRequest(requestID: 9, orderID: "8812", line: "taxi", targetState: "created", idempotencyKey: "k"),
            PublishRequest(requestID: 10, orderID: "no spaces", line: "taxi", targetState: "created"),
            PublishRequest(requestID: 11, orderID: "8812", line: "Taxi", targetState: "created"),
            PublishRequest(requestID: 12, orderID: "8812", line: "express", targetState: "created"),
            PublishRequest(requestID: 13, orderID: "8812", line: "taxi", targetState: ""),
        ]
        for token in ["admin", "pub", "sub:order://taxi/*"] {
            var byActions = connected(token: token)
            var byDecision = connected(token: token)
            for (index, request) in (requests + requests).enumerated() {
                let expected = byActions.receive(.publish(request), nowMillis: UInt64(index))
                let decided: [PeerAction]
                switch byDecision.receivePublish(request, nowMillis: UInt64(index)) {
                case .apply(let change, let requestID, let wantsReceipts):
                    decided = [.publish(change, requestID: requestID, wantsReceipts: wantsReceipts)]
                case .answer(let actions):
                    decided = actions
                }
                #expect(decided == expected, "\(token): \(request)")
                #expect(byDecision.phase == byActions.phase)
            }
        }
        var handshaking = PeerStateMachine(clientID: "c2", settings: settings, authorizer: TableAuthorizer(), nowMillis: 0)
        handshaking.transportReady(nowMillis: 0)
        var copy = handshaking
        guard case .answer(let actions) = handshaking.receivePublish(requests[0], nowMillis: 1) else {
            Issue.record("a publish before connect must not reach the store")
            return
        }
        #expect(actions == copy.receive(.publish(requests[0]), nowMillis: 1))
        let peer = connected()
        let snapshot = OrderSnapshot(
            orderID: OrderID("8812")!, line: .taxi, state: "driver_assigned", fields: .none,
            position: StreamPosition(epoch: 7, offset: 5), createdAtMillis: 1, updatedAtMillis: 1)
        let applied = AppliedChange(record: record(5), snapshot: snapshot, deduplicated: true)
        for result: Result<AppliedChange, StoreError> in [.success(applied), .failure(.storage("down", retryable: true))] {
            let frame = peer.publishResult(requestID: 4, result: result)
            #expect(frame.map { [PeerAction.send($0)] } == peer.publishCompleted(requestID: 4, result: result))
        }
    }

    @Test("ping is answered; silence past interval + timeout closes with heartbeat_timeout")
    func heartbeat() {
        var peer = connected()
        #expect(peer.receive(.ping, nowMillis: 10) == [.send(.pong)])
        #expect(peer.tick(nowMillis: 500).isEmpty)
        #expect(peer.tick(nowMillis: 1_000) == [.send(.ping)])
        #expect(peer.tick(nowMillis: 1_200).isEmpty)
        #expect(peer.receive(.pong, nowMillis: 1_300).isEmpty)
        #expect(closeCode(peer.tick(nowMillis: 2_700)) == nil)
        #expect(closeCode(peer.tick(nowMillis: 2_800)) == .heartbeatTimeout)
    }

    @Test("a peer that never sends connect is closed with handshake_timeout")
    func handshakeTimeout() {
        var peer = PeerStateMachine(clientID: "c1", settings: settings, authorizer: TableAuthorizer(), nowMillis: 0)
        peer.transportReady(nowMillis: 0)
        #expect(peer.tick(nowMillis: 1_999).isEmpty)
        #expect(closeCode(peer.tick(nowMillis: 2_000)) == .handshakeTimeout)
        #expect(peer.tick(nowMillis: 3_000).isEmpty)
    }

    @Test("token expiry is warned once, refresh extends it, and expiry without refresh disconnects")
    func tokenExpiry() {
        var peer = connected(token: "exp:1000")
        #expect(peer.tick(nowMillis: 800).isEmpty)
        #expect(peer.tick(nowMillis: 900) == [.send(.tokenExpiring(TokenExpiring(expiresAtMillis: 1000)))])
        #expect(peer.tick(nowMillis: 950).isEmpty)
        #expect(peer.receive(.refresh(RefreshRequest(token: "exp:5000")), nowMillis: 960).isEmpty)
        #expect(closeCode(peer.tick(nowMillis: 1_100)) == nil)
        var lazy = connected(token: "exp:1000")
        _ = lazy.receive(.ping, nowMillis: 999)
        #expect(closeCode(lazy.tick(nowMillis: 1_000)) == .tokenExpired)
    }

    @Test("a token that lives less than the warning lead is warned half-way, once per token, not on every tick")
    func shortTokenWarnedOncePerToken() {
        // The lead is 100 ms; each token here lives 60 ms from when it is accepted.
        var peer = connected(token: "exp:60")
        #expect(peer.tick(nowMillis: 29).isEmpty)
        #expect(peer.tick(nowMillis: 30) == [.send(.tokenExpiring(TokenExpiring(expiresAtMillis: 60)))])
        #expect(peer.receive(.refresh(RefreshRequest(token: "exp:100")), nowMillis: 40).isEmpty)
        #expect(peer.tick(nowMillis: 41).isEmpty, "the refreshed token is not warned about at once")
        #expect(peer.tick(nowMillis: 69).isEmpty)
        #expect(peer.tick(nowMillis: 70) == [.send(.tokenExpiring(TokenExpiring(expiresAtMillis: 100)))])
        #expect(peer.tick(nowMillis: 80).isEmpty)
    }

    @Test("drain sends a shutdown disconnect with the reconnect delay, once")
    func drain() {
        var peer = connected()
        let actions = peer.drain(reconnectAfterMillis: 1234)
        #expect(actions == [.close(Disconnect(code: .shutdown, reason: "server shutting down", reconnectAfterMillis: 1234))])
        #expect(peer.drain(reconnectAfterMillis: 1).isEmpty)
        #expect(peer.receive(.ping, nowMillis: 1).isEmpty)
    }

    @Test("decode failures map to frame_too_large or protocol_violation")
    func decodeFailures() {
        var peer = connected()
        #expect(closeCode(peer.decodeFailed(.oversized(length: 1 << 40, limit: 65_536))) == .frameTooLarge)
        var other = connected()
        #expect(closeCode(other.decodeFailed(.malformed("garbage"))) == .protocolViolation)
    }
}
