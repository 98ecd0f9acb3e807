import Foundation
import LonglinkCore
import LonglinkProtobuf
import Testing
import LonglinkTestSupport

/// Byte-exact frames produced by protoc from text format (see Fixtures/README.md).
@Suite("Golden frames", .ownThreads)
struct GoldenFrameTests {
    enum Golden: Sendable {
        case server(ServerFrame)
        case client(ClientFrame)
    }

    static let cases: [(String, Golden)] = [
        ("server_push_typical", .server(Samples.typicalPush())),
        ("server_push_custom_states", .server(.push(Push(
            route: Samples.carpool,
            record: OrderChangeRecord(
                orderID: OrderID("cp-77.a_B")!, line: .carpool, fromState: "carpool_forming",
                toState: "waiting_for_co_riders",
                fields: OrderFields(
                    driverID: "driver-4711", etaSeconds: 0,
                    location: GeoPoint(latitudeE6: -33_868_820, longitudeE6: -151_209_296),
                    cancellationReason: "rider changed plans ✈", payload: [0, 1, 2, 255]),
                position: StreamPosition(epoch: .max, offset: .max), timestampMillis: 1_732_900_000_615),
            skippedBefore: true)))),
        ("server_push_first_record", .server(.push(Samples.firstPush))),
        ("server_subscribed", .server(.subscribed(Subscribed(
            requestID: 9, route: Samples.taxi8812, snapshot: Samples.snapshot,
            position: StreamPosition(epoch: 3, offset: 11), recovered: true,
            missed: [
                Samples.record(on: Samples.taxi8812, from: "in_trip", to: "completed", offset: 10, epoch: 3),
                Samples.record(on: Samples.taxi8812, from: "completed", to: "rated_by_rider",
                               fields: OrderFields(etaSeconds: 5), offset: 11, epoch: 3),
            ])))),
        ("server_publish_result_refused", .server(.publishResult(PublishResult(
            requestID: 78,
            outcome: .refused(ErrorFrame(requestID: 78, code: .illegalTransition,
                                         message: "created → paid is not allowed")))))),
        ("server_disconnect", .server(.disconnect(Disconnect(
            code: .slow, reason: "outbound queue full", reconnectAfterMillis: 1_500)))),
        ("client_publish", .client(.publish(PublishRequest(
            requestID: 5, orderID: "8812", line: "taxi", targetState: "driver_arriving",
            fields: Samples.typicalFields, idempotencyKey: "pub-1:8812:3", wantsReceipts: true)))),
        ("client_subscribe", .client(.subscribe(SubscribeRequest(
            requestID: 1, route: "order://taxi/8812", since: StreamPosition(epoch: 7, offset: 41))))),
        ("client_ack", .client(.ack(Ack(route: "order://taxi/8812", offset: 3)))),
        // Presence (added compatibly: new frame kinds 20-22 and Subscribe.presence_events; the frames above are unchanged).
        ("client_presence", .client(.presence(PresenceRequest(requestID: 12, route: "order://taxi/8812")))),
        // Smart heartbeat (added compatibly: frame kind 23, Connect.ping_interval_ms, Connected.min/max_ping_interval_ms).
        ("client_heartbeat", .client(.heartbeat(HeartbeatRequest(requestID: 4, pingIntervalMillis: 55_000)))),
        ("client_connect_ping_interval", .client(.connect(ConnectRequest(
            token: "t", clientName: "rider-app", clientVersion: "3.1", pingIntervalMillis: 120_000)))),
        ("server_connected_ping_bounds", .server(.connected(Connected(
            clientID: "c65", nodeID: "node-a", pingIntervalMillis: 120_000, pongTimeoutMillis: 10_000, maxFrameSize: 65_536,
            maxSubscriptions: 128, minPingIntervalMillis: 10_000, maxPingIntervalMillis: 300_000)))),
        ("client_subscribe_presence_events", .client(.subscribe(SubscribeRequest(
            requestID: 2, route: "order://taxi/*", presenceEvents: true)))),
        ("server_presence_reply", .server(.presenceReply(PresenceReply(
            requestID: 12, route: Samples.taxi8812, count: 2, users: 2, countsOnly: false,
            members: [
                PresenceMember(userID: "rider-1", clientName: "rider-app/3.1", connectionID: "c65",
                               sinceMillis: 1_732_900_000_000, nodeID: "a"),
                PresenceMember(userID: "driver-42", clientName: "driver-app/7.0", connectionID: "c129",
                               sinceMillis: 1_732_900_000_615, nodeID: "b"),
            ])))),
        ("server_presence_event", .server(.presenceEvent(PresenceEvent(
            route: Samples.taxi8812, joined: false,
            member: PresenceMember(userID: "driver-42", clientName: "driver-app/7.0", connectionID: "c129",
                                   sinceMillis: 1_732_900_000_615, nodeID: "b"))))),
    ]

    static func fixture(_ name: String) throws -> [UInt8] {
        let url = try #require(Bundle.module.url(forResource: name, withExtension: "bin", subdirectory: "Fixtures"))
        return Array(try Data(contentsOf: url))
    }

    /// The body `ProtobufFrameCodec` writes for `golden`, without its length prefix.
    static func encodedBody(_ golden: Golden) throws -> [UInt8] {
        let codec = ProtobufFrameCodec()
        var buffer = ByteBuffer()
        switch golden {
        case .server(let frame): try codec.encode(frame, into: &buffer)
        case .client(let frame): try codec.encode(frame, into: &buffer)
        }
        return try #require(try FrameReader().nextFrame(in: &buffer) { Array($0) })
    }

    @Test("the codec encodes each golden frame to exactly the committed bytes", arguments: cases)
    func encodesGolden(_ name: String, _ golden: Golden) throws {
        let expected = try Self.fixture(name)
        let actual = try Self.encodedBody(golden)
        #expect(actual == expected, "\(name)")
    }

    @Test("the codec decodes each committed golden frame", arguments: cases)
    func decodesGolden(_ name: String, _ golden: Golden) throws {
        let bytes = try Self.fixture(name)
        let codec = ProtobufFrameCodec()
        try bytes.withUnsafeBytes { (body) throws in
            switch golden {
            case .server(let frame): #expect(try codec.decodeServerFrame(body: body) == frame, "\(name)")
            case .client(let frame): #expect(try codec.decodeClientFrame(body: body) == frame, "\(name)")
            }
        }
    }

    @Test("the typical push is 64 bytes of body")
    func typicalPushSize() throws {
        #expect(try Self.fixture("server_push_typical").count == 64)
    }
}
