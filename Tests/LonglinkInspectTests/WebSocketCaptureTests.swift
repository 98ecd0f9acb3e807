import LonglinkTestSupport
import LonglinkInspect
import Testing

/// `inspect pcap` on a Longlink session over WebSocket (`serve --ws-listen`): the upgrade heads are skipped, the
/// frames' payloads (client ones unmasked, fragments joined) are decoded as the usual frame stream, close frames
/// are listed in the connection summary.
@Suite("inspect pcap of a WebSocket session", .ownThreads)
struct WebSocketCaptureTests {
    typealias B = CaptureBuilder
    static let t0: UInt64 = 1_732_900_000_000_000
    static let server = B.Host.v4(10, 0, 0, 1, port: 7071)
    static let client = B.Host.v4(10, 0, 0, 2, port: 41_000)

    /// One WebSocket frame; masked (as a client sends) when `key` is given.
    static func frame(_ opcode: UInt8, _ payload: [UInt8], fin: Bool = true, key: [UInt8]? = nil) -> [UInt8] {
        var out: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        let mask: UInt8 = key == nil ? 0 : 0x80
        if payload.count <= 125 {
            out.append(mask | UInt8(payload.count))
        } else {
            out += [mask | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        }
        guard let key else { return out + payload }
        return out + key + payload.enumerated().map { $0.element ^ key[$0.offset & 3] }
    }

    @Test("decodes the frames inside the WebSocket messages of both directions and lists the close frames")
    func session() async throws {
        let key: [UInt8] = [9, 8, 7, 6]
        let ack = try Fixtures.frame("client_ack")
        let request = "GET /longlink HTTP/1.1\r\nHost: 10.0.0.1:7071\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: longlink.v1.protobuf\r\n\r\n"
        let clientStream = Array(request.utf8) + Self.frame(0x2, try Fixtures.frame("client_subscribe"), key: key)
            + Self.frame(0x2, Array(ack[0..<5]), fin: false, key: key) + Self.frame(0x9, [1], key: key)
            + Self.frame(0x0, Array(ack[5...]), key: key) + Self.frame(0x8, [0x03, 0xE8], key: key)
        let response = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\nSec-WebSocket-Protocol: longlink.v1.protobuf\r\n\r\n"
        let serverStream = Array(response.utf8) + Self.frame(0x2, try Fixtures.frame("server_subscribed"))
            + Self.frame(0xA, [1]) + Self.frame(0x2, try Fixtures.frame("server_push_typical"))
            + Self.frame(0x8, [0x0B, 0xBF] + Array("admin".utf8))
        let c = Self.client, s = Self.server
        let packets: [(UInt64, [UInt8])] = [
            (Self.t0, B.packet(.ethernet, from: c, to: s, sequence: 100, flags: B.syn)),
            (Self.t0 + 100, B.packet(.ethernet, from: s, to: c, sequence: 700, flags: B.syn | B.ack)),
            (Self.t0 + 1_000, B.packet(.ethernet, from: c, to: s, sequence: 101, flags: B.psh | B.ack, payload: Array(clientStream[0..<250]))),
            (Self.t0 + 2_000, B.packet(.ethernet, from: s, to: c, sequence: 701, flags: B.psh | B.ack, payload: serverStream)),
            (Self.t0 + 3_000, B.packet(.ethernet, from: c, to: s, sequence: 351, flags: B.psh | B.ack, payload: Array(clientStream[250...]))),
        ]
        let scratch = try ScratchDirectory()
        defer { scratch.cleanup() }
        let result = await runCLI(["inspect", "pcap", try scratch.write("capture", B.pcap(link: .ethernet, packets)), "--port", "7071"])
        #expect(result.code == 0, "\(result.err)")
        let text = result.lines.joined(separator: "\n")
        #expect(result.lines.contains { $0.contains("→ subscribe order://taxi/8812 request=1 since=7:41") }, "\(text)")
        #expect(result.lines.contains { $0.contains("← subscribed order://taxi/8812 3:11") }, "\(text)")
        #expect(result.lines.contains { $0.contains("→ ack order://taxi/8812 offset=3") }, "a fragmented message, a ping between: \(text)")
        #expect(result.lines.contains { $0.contains("← push order://taxi/8812 1:3 driver_assigned → driver_arriving") }, "\(text)")
        #expect(result.lines.contains { $0.hasPrefix("summary: 1 connections") && $0.contains("4 frames") && $0.contains("0 malformed") }, "\(text)")
        let connection = try #require(result.lines.first { $0.contains("connection 1:") })
        #expect(connection.contains("WebSocket, client 2 frames"), "\(connection)")
        #expect(connection.contains("WebSocket close 1000 from the client, 3007 \"admin\" from the server"), "\(connection)")
    }
}
