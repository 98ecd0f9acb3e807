import Foundation
import LonglinkCore
import LonglinkJSON
import LonglinkTestSupport
import Testing

/// Presence on a real gateway process started like `make run`, with real tokens over real sockets: the rider-app
/// case (the driver's client shows up in the rider's presence reply and leaves it when its connection closes),
/// join/leave events only when asked for, scopes, counts-only mode, the admin API and `longlink presence`.
@Suite("Presence: presence requests, join/leave events, counts-only, admin API", .serialized, .ownThreads)
struct PresenceTests {
    static let order = "order://taxi/8812"

    /// A raw client connected with `token` under `name`.
    static func connect(_ gateway: MakeRunGateway, token: String, name: String) throws -> FramePeer {
        let peer = try FramePeer(port: gateway.port)
        try peer.send(.connect(ConnectRequest(token: token, clientName: name)))
        _ = try #require(try peer.next { if case .connected(let c) = $0 { c } else { nil } })
        return peer
    }

    static func subscribe(_ peer: FramePeer, _ route: String = order, events: Bool = false) throws {
        try peer.send(.subscribe(SubscribeRequest(requestID: 1, route: route, presenceEvents: events)))
        _ = try #require(try peer.next { if case .subscribed(let s) = $0 { s } else { nil } })
    }

    static func presence(_ peer: FramePeer, _ route: String = order, requestID: UInt32 = 9) throws -> PresenceReply? {
        try peer.send(.presence(PresenceRequest(requestID: requestID, route: route)))
        return try peer.next { frame in
            if case .presenceReply(let reply) = frame, reply.requestID == requestID { return reply }
            return nil
        }
    }

    static func event(_ peer: FramePeer, timeout: Duration = .seconds(5)) throws -> PresenceEvent? {
        try peer.next(timeout: timeout) { if case .presenceEvent(let e) = $0 { e } else { nil } }
    }

    /// Asks `peer` for the route's presence and returns the presence events that reached it before the reply. The
    /// gateway writes a connection's frames in order, so an event already sent to the peer comes before the reply:
    /// waiting for the reply, not for a quiet period, shows what the peer got.
    static func eventsBeforePresenceReply(_ peer: FramePeer, requestID: UInt32) throws -> (events: [PresenceEvent], reply: PresenceReply?) {
        try peer.send(.presence(PresenceRequest(requestID: requestID, route: order)))
        var events: [PresenceEvent] = []
        let reply: PresenceReply? = try peer.next { frame in
            switch frame {
            case .presenceEvent(let event):
                events.append(event)
                return nil
            case .presenceReply(let reply) where reply.requestID == requestID:
                return reply
            default:
                return nil
            }
        }
        return (events, reply)
    }

    @Test("rider app: the driver's client appears in the rider's presence and leaves it when it disconnects")
    func riderSeesDriver() throws {
        let gateway = try MakeRunGateway()
        let rider = try Self.connect(gateway, token: try gateway.token("--sub rider-1 --routes \(Self.order)"), name: "rider-app/3.1")
        try Self.subscribe(rider, events: true)
        let driver = try Self.connect(gateway, token: try gateway.token("--sub driver-42 --routes \(Self.order)"), name: "driver-app/7.0")
        try Self.subscribe(driver)

        let joined = try #require(try Self.event(rider), "the rider asked for events: the driver's join")
        #expect(joined.joined && joined.member.userID == "driver-42" && joined.member.clientName == "driver-app/7.0")
        let reply = try #require(try Self.presence(rider))
        #expect(reply.count == 2 && reply.users == 2 && !reply.countsOnly)
        let member = try #require(reply.members.first { $0.userID == "driver-42" })
        #expect(member.clientName == "driver-app/7.0" && member.connectionID.hasPrefix("c") && member.sinceMillis > 1_700_000_000_000)
        #expect(reply.members.map(\.userID) == ["rider-1", "driver-42"], "oldest first")
        // The driver did not ask for events: none reach it (the rider already got the join, so any event meant for
        // the driver was sent before the driver's own presence reply).
        let driverView = try Self.eventsBeforePresenceReply(driver, requestID: 11)
        #expect(driverView.reply?.count == 2, "the driver's presence reply")
        #expect(driverView.events.isEmpty, "\(driverView.events)")

        // The admin API sees the same.
        let admin = try gateway.token("--sub ops --role admin")
        let viaAdmin = try HTTPTestClient.fetch(
            port: gateway.operationsPort, "GET", "/admin/presence?route=order://taxi/8812", headers: [("Authorization", "Bearer \(admin)")]
        )
        let json = try JSONValue.parse(viaAdmin.body)
        #expect(viaAdmin.status == 200 && json["count"]?.intValue == 2, "\(viaAdmin.text)")
        #expect(json["members"]?.arrayValue?.contains { $0["user"]?.stringValue == "driver-42" } == true, "\(viaAdmin.text)")

        // And `longlink presence`, with the rider's own token, as README shows.
        let cli = try gateway.bash(
            "LONGLINK_TOKEN=$(longlink token --secret-file data/dev-secret --sub rider-1 --routes \(Self.order) --ttl 1h) "
                + "longlink presence \(Self.order) --server 127.0.0.1:\(gateway.port)",
            withReleaseOnPath: true, name: "presence-cli"
        )
        #expect(cli.status == 0 && cli.output.contains("driver-42  client=driver-app/7.0"), "\(cli.output)")

        driver.close()
        let left = try #require(try Self.event(rider), "the driver's leave")
        #expect(!left.joined && left.member.userID == "driver-42")
        let after = try #require(try Self.presence(rider, requestID: 10))
        #expect(after.count >= 1 && !after.members.contains { $0.userID == "driver-42" }, "\(after)")
    }

    @Test("a token that does not cover the route gets permission_denied; a line-wide token may ask for an order")
    func scopes() throws {
        let gateway = try MakeRunGateway()
        let stranger = try Self.connect(gateway, token: try gateway.token("--sub rider-2 --routes order://taxi/1"), name: "x")
        try stranger.send(.presence(PresenceRequest(requestID: 4, route: Self.order)))
        let error = try #require(try stranger.error(for: 4))
        #expect(error.code == .permissionDenied)
        let console = try Self.connect(gateway, token: try gateway.token("--sub dispatch --routes 'order://taxi/*'"), name: "console")
        #expect(try Self.presence(console)?.count == 0)
    }

    @Test("counts-only above the threshold: exact counts, no members, no join/leave events")
    func countsOnly() throws {
        let gateway = try MakeRunGateway(arguments: "--presence-counts-only-above 2")
        let watcher = try Self.connect(gateway, token: try gateway.token("--sub ops-1 --routes 'order://*'"), name: "w")
        try Self.subscribe(watcher, events: true)
        var peers: [FramePeer] = []
        for index in 0..<3 {
            let peer = try Self.connect(gateway, token: try gateway.token("--sub user-\(index % 2) --routes \(Self.order)"), name: "p\(index)")
            try Self.subscribe(peer)
            peers.append(peer)
        }
        // Joins while at or below the threshold (2 subscribers after the first join) are announced, later ones not.
        let first = try #require(try Self.event(watcher))
        #expect(first.joined && first.member.clientName == "p0")
        // Every join was announced (or not) before the watcher's presence reply: the later events are those before it.
        let (later, answered) = try Self.eventsBeforePresenceReply(watcher, requestID: 9)
        #expect(!later.contains { $0.member.clientName == "p1" || $0.member.clientName == "p2" }, "\(later)")
        let reply = try #require(answered)
        #expect(reply.countsOnly && reply.members.isEmpty && reply.count == 4 && reply.users == 3, "\(reply)")
    }
}
