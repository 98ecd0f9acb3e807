import LonglinkTestSupport
import Foundation
import LonglinkClient
import LonglinkServer
import LonglinkCore
import LonglinkGateway
import LonglinkOpenSSL
import LonglinkStores
import Testing

@Suite("JWT tokens and route scopes, end to end", .ownThreads)
struct TokenGatewayTests {
    @Test("a token scoped to one order subscribes to it; another route gets permission_denied on that request only")
    func scopes() throws {
        let gateway = try SecureGateway()
        defer { gateway.stop() }
        let peer = try HostilePeer(port: gateway.port(.plain))
        #expect(try peer.handshake(token: gateway.token(routes: ["order://taxi/8812"])) != nil)
        try peer.send(.subscribe(SubscribeRequest(requestID: 1, route: "order://taxi/8812")))
        let subscribed = try peer.next { frame -> UInt32? in if case .subscribed(let s) = frame { s.requestID } else { nil } }
        #expect(subscribed == 1)
        try peer.send(.subscribe(SubscribeRequest(requestID: 2, route: "order://taxi/9999")))
        #expect(try peer.error(for: 2)?.code == .permissionDenied)
        // Still connected and served.
        try peer.send(.ping)
        #expect(try peer.next { if case .pong = $0 { true } else { nil } } == true)
    }

    @Test("repeated violations disconnect with forbidden")
    func repeatedViolations() throws {
        let gateway = try SecureGateway(maxViolations: 3)
        defer { gateway.stop() }
        let peer = try HostilePeer(port: gateway.port(.plain))
        #expect(try peer.handshake(token: gateway.token(routes: ["order://taxi/1"])) != nil)
        for id in 1...3 {
            try peer.send(.subscribe(SubscribeRequest(requestID: UInt32(id), route: "order://food/\(id)")))
        }
        #expect(try peer.disconnect()?.code == .forbidden)
        #expect(try peer.closedByServer())
    }

    @Test("publishing needs the publisher role")
    func publisherRole() throws {
        let gateway = try SecureGateway()
        defer { gateway.stop() }
        let publish = PublishRequest(requestID: 7, orderID: "p1", line: "taxi", targetState: "created", idempotencyKey: "k1")
        let subscriber = try HostilePeer(port: gateway.port(.plain))
        #expect(try subscriber.handshake(token: gateway.token(role: .subscriber)) != nil)
        try subscriber.send(.publish(publish))
        #expect(try subscriber.error(for: 7)?.code == .permissionDenied)
        let publisher = try HostilePeer(port: gateway.port(.plain))
        #expect(try publisher.handshake(token: gateway.token("backend", role: .publisher, routes: ["order://taxi/*"])) != nil)
        try publisher.send(.publish(publish))
        let accepted = try publisher.next { frame -> Bool? in
            if case .publishResult(let r) = frame, r.requestID == 7, case .accepted = r.outcome { return true }
            return nil
        }
        #expect(accepted == true)
    }

    @Test("a publisher stores changes only on routes its token covers; elsewhere permission_denied and nothing stored")
    func publisherRoutes() throws {
        let gateway = try SecureGateway()
        defer { gateway.stop() }
        func stored(_ line: BusinessLine, _ id: String) throws -> Bool {
            try gateway.running.writer.readAndWait { (store) throws(StoreError) in try store.snapshot(of: line, OrderID(id)!) != nil }
        }
        func publish(_ id: UInt32, _ line: String, _ order: String) -> ClientFrame {
            .publish(PublishRequest(requestID: id, orderID: order, line: line, targetState: "created", idempotencyKey: "k\(id)"))
        }
        func accepted(_ peer: HostilePeer, _ id: UInt32) throws -> Bool {
            try peer.next { frame -> Bool? in
                guard case .publishResult(let r) = frame, r.requestID == id else { return nil }
                if case .accepted = r.outcome { return true } else { return false }
            } == true
        }
        let taxiOnly = try HostilePeer(port: gateway.port(.plain))
        #expect(try taxiOnly.handshake(token: gateway.token("backend", role: .publisher, routes: ["order://taxi/*"])) != nil)
        try taxiOnly.send(publish(1, "express", "e1"))
        let denied = try taxiOnly.error(for: 1)
        #expect(denied?.code == .permissionDenied)
        #expect(denied?.message.contains("order://express/e1") == true, "\(String(describing: denied))")
        try taxiOnly.send(publish(2, "taxi", "t1"))
        #expect(try accepted(taxiOnly, 2))
        #expect(try stored(.taxi, "t1"))
        #expect(try !stored(.express, "e1"), "a change outside the token's routes must not be stored")

        // One order only; and a publisher token without routes publishes nowhere.
        let oneOrder = try HostilePeer(port: gateway.port(.plain))
        #expect(try oneOrder.handshake(token: gateway.token("backend", role: .publisher, routes: ["order://taxi/t2"])) != nil)
        try oneOrder.send(publish(3, "taxi", "t3"))
        #expect(try oneOrder.error(for: 3)?.code == .permissionDenied)
        try oneOrder.send(publish(4, "taxi", "t2"))
        #expect(try accepted(oneOrder, 4))
        let noRoutes = try HostilePeer(port: gateway.port(.plain))
        #expect(try noRoutes.handshake(token: gateway.token("backend", role: .publisher, routes: [])) != nil)
        try noRoutes.send(publish(5, "taxi", "t5"))
        #expect(try noRoutes.error(for: 5)?.code == .permissionDenied)
        #expect(try !stored(.taxi, "t3") && !stored(.taxi, "t5"))

        // An admin publishes anywhere, as it subscribes anywhere.
        let admin = try HostilePeer(port: gateway.port(.plain))
        #expect(try admin.handshake(token: gateway.token("ops", role: .admin, routes: ["order://taxi/*"])) != nil)
        try admin.send(publish(6, "express", "e6"))
        #expect(try accepted(admin, 6))
    }

    @Test(
        "forged, expired, alg-none and other-algorithm tokens are refused at connect with a numbered code",
        arguments: ["forged", "expired", "none", "HS512", "garbage", "empty"]
    )
    func badTokens(_ kind: String) throws {
        let gateway = try SecureGateway()
        defer { gateway.stop() }
        let good = gateway.token()
        let parts = good.split(separator: ".").map(String.init)
        let token: String
        var expected = DisconnectCode.invalidToken
        switch kind {
        case "forged": token = JWTMinter.sign(header: Array(#"{"alg":"HS256"}"#.utf8), payload: Base64URL.decode(Array(parts[1].utf8))!, secret: Array(repeating: 7, count: 32))
        case "expired":
            token = gateway.token(ttlSeconds: -10)
            expected = .tokenExpired
        case "none": token = Base64URL.encode(Array(#"{"alg":"none"}"#.utf8)) + "." + parts[1] + "."
        case "HS512": token = JWTMinter.sign(header: Array(#"{"alg":"HS512"}"#.utf8), payload: Base64URL.decode(Array(parts[1].utf8))!, secret: testSecret)
        case "garbage": token = "not.a.jwt"
        default: token = ""
        }
        let peer = try HostilePeer(port: gateway.port(.plain))
        try peer.send(.connect(ConnectRequest(token: token)))
        #expect(try peer.disconnect()?.code == expected)
        #expect(try peer.closedByServer())
    }

    @Test("before exp the client is warned; a refresh keeps it; without one it is disconnected with token_expired")
    func expiry() async throws {
        let gateway = try SecureGateway(tokenWarningLeadMillis: 2_500)
        defer { gateway.stop() }
        // Refreshing client (the library answers the warning with updateToken).
        let firstToken = gateway.token(ttlSeconds: 3)
        let firstExpiry = try JWTAuthorizer(secret: testSecret).verify(firstToken, nowMillis: 0).expiresAt * 1000
        let refreshing = try gateway.client(token: firstToken)
        defer { refreshing.close() }
        let warnings = LockedCounter()
        let fresh = gateway.token(ttlSeconds: 3600)
        refreshing.onTokenExpiring { _ in
            warnings.add()
            refreshing.updateToken(fresh)
        }
        // Raw peer that never refreshes.
        let lazy = try HostilePeer(port: gateway.port(.plain))
        let connected = try lazy.handshake(token: gateway.token("lazy", ttlSeconds: 3))
        #expect(connected.map { $0.tokenExpiresAtMillis > 0 } == true)
        let warning = try lazy.next(timeout: .seconds(6)) { if case .tokenExpiring(let t) = $0 { t } else { nil } }
        #expect(warning != nil)
        #expect(try lazy.disconnect(timeout: .seconds(6))?.code == .tokenExpired)
        #expect(await eventually { warnings.value >= 1 })
        // Past the refreshed client's original exp (plus a tick), only the lazy peer was cut.
        let pastExpiry = await eventually { UInt64(Date().timeIntervalSince1970 * 1000) > firstExpiry + 600 }
        #expect(pastExpiry)
        #expect(refreshing.state.isConnected)
        #expect(gateway.counters.disconnects[.tokenExpired] == 1)
    }

    @Test("publishes beyond the per-connection rate get rate_limited on that request; the connection stays")
    func publishRate() throws {
        let gateway = try SecureGateway(publishesPerSecond: 1, publishBurst: 3)
        defer { gateway.stop() }
        let peer = try HostilePeer(port: gateway.port(.plain))
        #expect(try peer.handshake(token: gateway.token("backend", role: .publisher)) != nil)
        for id in 1...8 {
            try peer.send(.publish(PublishRequest(requestID: UInt32(id), orderID: "rate\(id)", line: "taxi", targetState: "created", idempotencyKey: "k\(id)")))
        }
        var accepted = 0
        var limited = 0
        for _ in 1...8 {
            guard let result = try peer.next(timeout: .seconds(5), { if case .publishResult(let r) = $0 { r } else { nil } }) else { break }
            switch result.outcome {
            case .accepted: accepted += 1
            case .refused(let error):
                #expect(error.code == .rateLimited)
                #expect(error.retryable)
                limited += 1
            }
        }
        #expect(accepted + limited == 8)
        #expect(accepted >= 3 && limited >= 1, "accepted \(accepted), limited \(limited)")
        try peer.send(.ping)
        #expect(try peer.next { if case .pong = $0 { true } else { nil } } == true)
    }
}
