import Foundation
import LonglinkCore
import LonglinkProtobuf
import LonglinkTestSupport
import Testing

/// RFC 6455 cases against a real `longlink serve` process (its WebSocket listener on port 0), each with the HTTP
/// status or close code it must get. After every case the process must still be running and a fresh client must
/// still upgrade, connect and get an answer within seconds: no case crashes or stalls the server.
@Suite("WebSocket conformance (RFC 6455 against a real gateway process)", .serialized, .ownThreads)
struct WebSocketConformanceTests {
    /// The gateway still serves: a fresh upgrade, `connect` answered, a Longlink ping answered.
    static func expectHealthy(_ gateway: GatewayProcess, after name: String) throws {
        #expect(gateway.isRunning, "\(name): the gateway exited\n\(gateway.log)")
        let peer = try WebSocketPeer(port: gateway.webSocketPort)
        #expect(try peer.upgrade(port: gateway.webSocketPort)?.status == 101, "\(name): no upgrade afterwards")
        #expect(try peer.connect() != nil, "\(name): no connected frame afterwards")
        try peer.send(.ping)
        #expect(try peer.nextFrame(seconds: 5) == .pong, "\(name): no pong afterwards")
    }

    /// (name, raw request, status, a header the refusal must carry).
    static let handshakeCases: [(String, String, Int, (String, String)?)] = {
        func request(_ transform: (String) -> String) -> String { transform(WebSocketPeer.request(port: 7071)) }
        return [
            ("good handshake", WebSocketPeer.request(port: 7071), 101, ("sec-websocket-accept", "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")),
            ("same-origin page", WebSocketPeer.request(port: 7071, fields: [("Origin", "http://127.0.0.1:7071")]), 101, nil),
            ("POST", request { $0.replacingOccurrences(of: "GET /", with: "POST /") }, 405, ("allow", "GET")),
            ("wrong path", WebSocketPeer.request(path: "/other", port: 7071), 404, nil),
            ("HTTP/1.0", request { $0.replacingOccurrences(of: "HTTP/1.1", with: "HTTP/1.0") }, 400, nil),
            ("no Upgrade", request { $0.replacingOccurrences(of: "Upgrade: websocket\r\n", with: "") }, 426, ("upgrade", "websocket")),
            ("no Connection: Upgrade", request { $0.replacingOccurrences(of: "Connection: Upgrade", with: "Connection: keep-alive") }, 400, nil),
            ("bad version", request { $0.replacingOccurrences(of: "Version: 13", with: "Version: 8") }, 426, ("sec-websocket-version", "13")),
            ("no version", request { $0.replacingOccurrences(of: "Sec-WebSocket-Version: 13\r\n", with: "") }, 426, ("sec-websocket-version", "13")),
            ("no key", request { $0.replacingOccurrences(of: "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n", with: "") }, 400, nil),
            ("bad key", request { $0.replacingOccurrences(of: "dGhlIHNhbXBsZSBub25jZQ==", with: "c2hvcnQ=") }, 400, nil),
            ("no Host", request { $0.replacingOccurrences(of: "Host: 127.0.0.1:7071\r\n", with: "") }, 400, nil),
            ("foreign origin", WebSocketPeer.request(port: 7071, fields: [("Origin", "https://evil.example")]), 403, nil),
            ("no sub-protocol", request { $0.replacingOccurrences(of: "Sec-WebSocket-Protocol: longlink.v1.protobuf\r\n", with: "") }, 400, nil),
            ("another sub-protocol", request { $0.replacingOccurrences(of: "longlink.v1.protobuf", with: "mqtt") }, 400, nil),
            ("oversized head", WebSocketPeer.request(port: 7071, fields: [("X-Padding", String(repeating: "p", count: 9_000))]), 431, nil),
            ("oversized head, never finished", "GET /longlink HTTP/1.1\r\nX-Padding: " + String(repeating: "p", count: 9_000), 431, nil),
            ("garbage", "\u{16}\u{03}\u{01}\u{02}\u{00}\u{01}\u{00}\u{01}\u{fc}\u{03}\u{03}\r\n\r\n", 400, nil),
        ]
    }()

    @Test("the upgrade: a good handshake gets 101 with the accept hash; each broken requirement its HTTP status")
    func handshakes() throws {
        let gateway = try GatewayProcess()
        for (name, request, status, header) in Self.handshakeCases {
            let peer = try WebSocketPeer(port: gateway.webSocketPort)
            // The Host port in the table is a placeholder: same-origin checks compare against it.
            try peer.send(Array(request.replacingOccurrences(of: "7071", with: "\(gateway.webSocketPort)").utf8))
            guard let response = peer.response() else {
                Issue.record("\(name): no response")
                continue
            }
            #expect(response.status == status, "\(name): \(response.status) \(response.text)")
            if let (field, value) = header { #expect(response.header(field) == value, "\(name): \(field) is \(response.header(field) ?? "missing")") }
            if status == 101 {
                #expect(response.header("sec-websocket-protocol") == "longlink.v1.protobuf", "\(name)")
                #expect(try peer.connect() != nil, "\(name): no connected frame")
            } else {
                #expect(peer.http.waitForClose(seconds: 5), "\(name): the connection stays open after a refusal")
            }
            try Self.expectHealthy(gateway, after: name)
        }
    }

    @Test("a half-sent upgrade is closed once the handshake timeout passes")
    func handshakeTimeout() throws {
        let gateway = try GatewayProcess(["--handshake-timeout", "1s"])
        let peer = try WebSocketPeer(port: gateway.webSocketPort)
        try peer.send(Array("GET /longlink HTTP/1.1\r\nHost: 127.0.0.1\r\n".utf8))
        let started = ContinuousClock.now
        #expect(peer.http.waitForClose(seconds: 10))
        #expect(ContinuousClock.now - started < .seconds(8))
        #expect(peer.http.buffered.isEmpty || String(decoding: peer.http.buffered, as: UTF8.self).hasPrefix("HTTP/1.1"),
                "no WebSocket or Longlink bytes before an upgrade")
        try Self.expectHealthy(gateway, after: "handshake timeout")
    }

    /// What a frame case must get back.
    enum Expected {
        /// A close frame with this code, then the end of the connection.
        case close(UInt16)
        /// These events, in order (the connection stays open).
        case events([WebSocketPeer.Event])
        /// This many Longlink pong frames (the connection stays open).
        case pongFrames(Int)
    }

    static func longlink(_ frame: ClientFrame) -> [UInt8] { (try? FramePeer.bytes(frame)) ?? [] }
    /// The server's Longlink pong frame.
    static let serverPong = (try? ProtobufFrameCodec().encodedFrame(.pong)) ?? []

    /// (name, bytes sent after upgrade and connect, what must come back). The gateway runs with
    /// --max-frame-size 1KiB, so a message of 1,100 bytes is over the limit.
    static let frameCases: [(String, [UInt8], Expected)] = {
        let ping = longlink(.ping)
        return [
            ("unmasked client frame", ClientFrames.frame(0x2, ping, masked: false), .close(1002)),
            ("reserved bit RSV1", ClientFrames.frame(0x2, ping, rsv: 4), .close(1002)),
            ("reserved bits RSV2+RSV3", ClientFrames.frame(0x2, ping, rsv: 3), .close(1002)),
            ("unknown data opcode 3", ClientFrames.frame(0x3, ping), .close(1002)),
            ("unknown control opcode 11", ClientFrames.frame(0xB, []), .close(1002)),
            ("text frame", ClientFrames.frame(0x1, Array("{\"connect\":{}}".utf8)), .close(1003)),
            ("continuation without a message", ClientFrames.continuation(ping), .close(1002)),
            ("new message inside a fragmented one", ClientFrames.binary([ping[0]], fin: false) + ClientFrames.binary(ping), .close(1002)),
            ("fragmented control frame", ClientFrames.frame(0x9, [1], fin: false), .close(1002)),
            ("control frame over 125 bytes", ClientFrames.frame(0x9, [UInt8](repeating: 7, count: 126)), .close(1002)),
            ("oversized message", ClientFrames.binary([UInt8](repeating: 0, count: 1_100)), .close(1009)),
            ("oversized fragmented message", ClientFrames.binary([UInt8](repeating: 0, count: 600), fin: false)
                + ClientFrames.continuation([UInt8](repeating: 0, count: 600)), .close(1009)),
            ("close with a reserved code", ClientFrames.close(1005), .close(1002)),
            ("close with a non-UTF-8 reason", ClientFrames.frame(0x8, [0x03, 0xE8, 0xC3, 0x28]), .close(1007)),
            ("close handshake from the client", ClientFrames.close(1000, "bye"), .close(1000)),
            ("close from the client with a library code", ClientFrames.close(4001, "done"), .close(4001)),
            ("ping", ClientFrames.ping(Array("hello".utf8)), .events([.pong(Array("hello".utf8))])),
            ("empty ping", ClientFrames.ping(), .events([.pong([])])),
            ("unsolicited pong", ClientFrames.frame(0xA, [1, 2]) + ClientFrames.binary(ping), .pongFrames(1)),
            ("fragmented message", ClientFrames.binary([ping[0]], fin: false) + ClientFrames.continuation([ping[1]], fin: false)
                + ClientFrames.continuation(Array(ping[2...])), .pongFrames(1)),
            ("ping between fragments", ClientFrames.binary([ping[0]], fin: false) + ClientFrames.ping([42])
                + ClientFrames.continuation(Array(ping[1...])), .events([.pong([42]), .binary(serverPong)])),
            ("several frames in one message, 16-bit length", ClientFrames.binary(Array([[UInt8]](repeating: ping, count: 60).joined())),
                .pongFrames(60)),
            ("64-bit length form", ClientFrames.frame(0x2, ping, longForm: 8), .pongFrames(1)),
            ("16-bit length form for a short payload", ClientFrames.frame(0x2, ping, longForm: 2), .pongFrames(1)),
            ("frame split across writes", ClientFrames.binary(ping), .pongFrames(1)),
        ]
    }()

    @Test("frames: masking, reserved bits, opcodes, text, fragmentation, control frames, length forms, limits, close, ping")
    func frames() throws {
        let gateway = try GatewayProcess(["--max-frame-size", "1KiB"])
        for (name, bytes, expected) in Self.frameCases {
            let peer = try WebSocketPeer(port: gateway.webSocketPort)
            #expect(try peer.upgrade(port: gateway.webSocketPort)?.status == 101, "\(name)")
            #expect(try peer.connect() != nil, "\(name): not connected")
            if name == "frame split across writes" {
                for byte in bytes {
                    try peer.send([byte])
                    usleep(2_000)
                }
            } else {
                try peer.send(bytes)
            }
            switch expected {
            case .close(let code):
                let event = peer.nextNonPing()
                #expect(event.map { if case .close(code, _) = $0 { true } else { false } } == true, "\(name): got \(event.map(String.init(describing:)) ?? "nothing")")
                #expect(peer.http.waitForClose(seconds: 5), "\(name): still open after the close frame")
            case .events(let events):
                for wanted in events {
                    let event = peer.nextNonPing()
                    #expect(event == wanted, "\(name): got \(event.map(String.init(describing:)) ?? "nothing"), wanted \(wanted)")
                }
            case .pongFrames(let count):
                var pongs = 0
                while pongs < count, let frame = try peer.nextFrame(seconds: 5) {
                    if frame == .pong { pongs += 1 }
                }
                #expect(pongs == count, "\(name): \(pongs) of \(count) pong frames")
            }
            try Self.expectHealthy(gateway, after: name)
        }
    }

    @Test("a push reaches a WebSocket subscriber; metrics and the admin list label the connection ws")
    func pushesMetricsAndAdminList() throws {
        let gateway = try GatewayProcess()
        let subscriber = try WebSocketPeer(port: gateway.webSocketPort)
        #expect(try subscriber.upgrade(port: gateway.webSocketPort)?.status == 101)
        let connected = try #require(try subscriber.connect())
        try subscriber.send(.subscribe(SubscribeRequest(requestID: 1, route: "order://taxi/ws1")))
        guard case .subscribed(let subscribed)? = try subscriber.nextFrame() else {
            Issue.record("no subscribed frame")
            return
        }
        #expect(subscribed.route.text == "order://taxi/ws1")
        let publisher = try WebSocketPeer(port: gateway.webSocketPort)
        #expect(try publisher.upgrade(port: gateway.webSocketPort)?.status == 101)
        _ = try publisher.connect()
        for (index, state) in ["created", "dispatching", "no_driver_timeout"].enumerated() {
            try publisher.send(.publish(PublishRequest(requestID: UInt32(index + 1), orderID: "ws1", line: "taxi", targetState: state)))
        }
        var states: [String] = []
        while states.count < 3, let frame = try subscriber.nextFrame(seconds: 10) {
            if case .push(let push) = frame { states.append(push.record.toState.name) }
        }
        #expect(states == ["created", "dispatching", "no_driver_timeout"])

        let metrics = try gateway.admin("GET", "/metrics").text
        #expect(metrics.contains(#"longlink_connections{transport="ws"} 2"#), "\(metrics.split(separator: "\n").filter { $0.contains("longlink_connections{") })")
        #expect(metrics.contains(#"longlink_connections{transport="tcp"} 0"#))
        let list = try gateway.admin("GET", "/admin/connections?filter=order://taxi/ws1").text
        #expect(list.contains(#""transport":"ws""#), "\(list)")
        #expect(list.contains(connected.clientID), "\(list)")

        // An operator's disconnect: the disconnect frame, then a close frame with the same number and reason.
        let answer = try gateway.admin("POST", "/admin/connections/\(connected.clientID)/disconnect", body: "{}")
        #expect(answer.status == 200, "\(answer.text)")
        var disconnect: Disconnect?
        while let frame = try subscriber.nextFrame(seconds: 5) {
            if case .disconnect(let d) = frame { disconnect = d }
        }
        #expect(disconnect?.code == .adminReconnect)
        #expect(subscriber.http.buffered.count > 0)
        let tail = WebSocketPeer.lastEvent(subscriber)
        #expect(tail == .close(3007, disconnect?.reason ?? ""), "\(String(describing: tail))")
        #expect(subscriber.http.waitForClose(seconds: 5))
    }

    @Test("a drain (SIGTERM) sends each WebSocket client the shutdown disconnect and close 3000, then exits 0")
    func drain() throws {
        let gateway = try GatewayProcess()
        let peer = try WebSocketPeer(port: gateway.webSocketPort)
        #expect(try peer.upgrade(port: gateway.webSocketPort)?.status == 101)
        _ = try peer.connect()
        gateway.terminate()
        var disconnect: Disconnect?
        while let frame = try peer.nextFrame(seconds: 10) {
            if case .disconnect(let d) = frame { disconnect = d }
        }
        #expect(disconnect?.code == .shutdown)
        #expect(WebSocketPeer.lastEvent(peer).map { if case .close(3000, _) = $0 { true } else { false } } == true)
        gateway.stop()
        #expect(gateway.process.termination == .exited(0))
    }

    @Test("over the connection limit, a WebSocket client gets 503 with Retry-After")
    func admission() throws {
        let gateway = try GatewayProcess(["--max-connections", "1"])
        let first = try WebSocketPeer(port: gateway.webSocketPort)
        #expect(try first.upgrade(port: gateway.webSocketPort)?.status == 101)
        _ = try first.connect()
        let second = try WebSocketPeer(port: gateway.webSocketPort)
        let refused = try second.upgrade(port: gateway.webSocketPort)
        #expect(refused?.status == 503)
        #expect(refused?.header("retry-after") != nil)
        #expect(refused?.header("x-longlink-disconnect") == "3004")
        try first.send(.ping)
        #expect(try first.nextFrame() == .pong, "the admitted client is unaffected")
    }
}

extension WebSocketPeer {
    /// The last complete WebSocket event in everything `peer` received (after its frames were read).
    static func lastEvent(_ peer: WebSocketPeer) -> Event? {
        var offset = 0
        var last: Event?
        let bytes = peer.http.buffered
        while let (event, length) = parse(bytes, from: offset) {
            last = event
            offset += length
        }
        return last
    }
}
