import Foundation
import LonglinkCore
import LonglinkProtobuf
import LonglinkTestSupport
import Testing

/// The JavaScript client's unit tests (`node --test clients/js/test/`) run from here, so `make test` runs them,
/// and the golden frames they decode are the Swift codec's bytes (beside protoc's in LonglinkProtobufTests).
@Suite("JavaScript client (Node unit tests, golden frames from the Swift codec)", .ownThreads)
struct JavaScriptClientTests {
    static var directory: String { GatewayProcess.packageRoot + "/clients/js" }

    enum Frame: Sendable {
        case server(ServerFrame)
        case client(ClientFrame)
    }

    /// Frames the protoc fixtures do not cover; `clients/js/test/golden.test.mjs` holds the objects they decode to.
    static let frames: [(String, Frame)] = {
        let route = Route.order(.taxi, OrderID("8812")!)
        return [
            ("server_connected", .server(.connected(Connected(
                clientID: "c64", nodeID: "node-1", pingIntervalMillis: 25_000, pongTimeoutMillis: 10_000,
                maxFrameSize: 65_536, maxSubscriptions: 128, tokenExpiresAtMillis: 1_732_903_600_000)))),
            ("server_ping", .server(.ping)),
            ("server_pong", .server(.pong)),
            ("server_token_expiring", .server(.tokenExpiring(TokenExpiring(expiresAtMillis: 1_732_903_600_000)))),
            ("server_error", .server(.error(ErrorFrame(requestID: 3, code: .permissionDenied, message: "token does not allow order://taxi/9")))),
            ("server_unsubscribed", .server(.unsubscribed(Unsubscribed(requestID: 4, route: route)))),
            ("server_subscribed_fresh", .server(.subscribed(Subscribed(
                requestID: 1, route: route, snapshot: nil, position: StreamPosition(epoch: 1, offset: 0), recovered: false)))),
            ("server_delivery_receipt", .server(.deliveryReceipt(DeliveryReceipt(
                route: route, position: StreamPosition(epoch: 1, offset: 4), subscriberID: "c128", ackedCount: 2)))),
            ("server_publish_result_accepted", .server(.publishResult(PublishResult(
                requestID: 5, outcome: .accepted(position: StreamPosition(epoch: 1, offset: 4), timestampMillis: 1_732_900_000_004, deduplicated: true))))),
            ("client_connect", .client(.connect(ConnectRequest(token: "eyJ.x.y", clientName: "longlink-js", clientVersion: "0.1.0")))),
            ("client_refresh", .client(.refresh(RefreshRequest(token: "eyJ.new")))),
            ("client_unsubscribe", .client(.unsubscribe(UnsubscribeRequest(requestID: 2, route: "order://taxi/8812")))),
            ("client_ping", .client(.ping)),
            ("client_pong", .client(.pong)),
            ("client_subscribe_fresh", .client(.subscribe(SubscribeRequest(requestID: 3, route: "order://taxi/8812")))),
            ("client_publish_named_state", .client(.publish(PublishRequest(
                requestID: 6, orderID: "cp-1", line: "carpool", targetState: "waiting_for_co_riders", idempotencyKey: "k-1")))),
        ]
    }()

    /// The frame body (no length prefix) the Swift codec writes.
    static func body(_ frame: Frame) throws -> [UInt8] {
        var buffer = ByteBuffer()
        switch frame {
        case .server(let frame): try ProtobufFrameCodec().encode(frame, into: &buffer)
        case .client(let frame): try ProtobufFrameCodec().encode(frame, into: &buffer)
        }
        return try #require(try FrameReader().nextFrame(in: &buffer) { Array($0) })
    }

    @Test("the committed golden frames of the JavaScript tests are what the Swift codec encodes", arguments: frames)
    func goldenFrames(_ name: String, _ frame: Frame) throws {
        let path = Self.directory + "/test/golden/\(name).bin"
        let bytes = try Self.body(frame)
        if ProcessInfo.processInfo.environment["LONGLINK_WRITE_JS_GOLDEN"] == "1" {
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        }
        let committed = try #require(FileManager.default.contents(atPath: path), "\(path) is missing (LONGLINK_WRITE_JS_GOLDEN=1 writes it)")
        #expect(Array(committed) == bytes, "\(name): the Swift codec's bytes changed; regenerate with LONGLINK_WRITE_JS_GOLDEN=1 on purpose")
    }

    @Test("node --test: codec against golden frames, schema against frames.proto, client behaviour")
    func nodeUnitTests() throws {
        // The test files by name: how `node --test` treats a directory argument differs between Node versions.
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.directory + "/test").filter { $0.hasSuffix(".test.mjs") }.sorted()
        #expect(files.count >= 3, "\(files)")
        let output = try ProcessRunner.run(["node", "--test"] + files.map { Self.directory + "/test/" + $0 }, timeout: .seconds(120))
        #expect(output.status == 0, "\(output.text)")
        #expect(output.text.contains("# fail 0"), "\(output.text)")
    }
}
