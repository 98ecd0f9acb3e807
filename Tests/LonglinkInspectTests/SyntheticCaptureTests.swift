import LonglinkTestSupport
import LonglinkInspect
import Testing

/// `inspect pcap` on captures the test writes itself: reordered and retransmitted segments, IPv6, TLS,
/// another port, a UDP packet, every supported link type, and pcapng.
@Suite("inspect pcap (synthetic captures)", .ownThreads)
struct SyntheticCaptureTests {
    typealias B = CaptureBuilder
    static let t0: UInt64 = 1_732_900_000_000_000
    static let server = B.Host.v4(10, 0, 0, 1, port: 7070)
    static let client = B.Host.v4(10, 0, 0, 2, port: 40_000)
    static let tlsClient = B.Host.v4(10, 0, 0, 3, port: 40_002)
    static let server6 = B.Host.loopback6(port: 7070)
    static let client6 = B.Host.loopback6(port: 40_001)

    /// (time, is IPv6, packet builder): the whole scenario, for any link type.
    static func scenario() throws -> [(UInt64, Bool, (B.Link) -> [UInt8])] {
        let clientStream = try Fixtures.frame("client_subscribe") + Fixtures.frame("client_publish") + Fixtures.frame("client_ack")
        let subscribed = try Fixtures.frame("server_subscribed")
        let push = try Fixtures.frame("server_push_typical")
        let c = client, s = server
        func tcp(_ from: B.Host, _ to: B.Host, _ seq: UInt32, _ flags: UInt8, _ payload: [UInt8] = []) -> (B.Link) -> [UInt8] {
            { B.packet($0, from: from, to: to, sequence: seq, flags: flags, payload: payload) }
        }
        let cs = Array(clientStream)
        return [
            (t0 + 0, false, tcp(c, s, 1000, B.syn)),
            (t0 + 100, false, tcp(s, c, 5000, B.syn | B.ack)),
            (t0 + 1_000, false, tcp(c, s, 1001, B.psh | B.ack, Array(cs[0..<40]))),
            (t0 + 2_000, false, tcp(c, s, 1081, B.psh | B.ack, Array(cs[80...]))),  // before the segment it follows
            (t0 + 3_000, false, tcp(s, c, 5001, B.psh | B.ack, subscribed)),
            (t0 + 4_000, false, tcp(c, s, 1041, B.psh | B.ack, Array(cs[40..<80]))),
            (t0 + 4_500, false, tcp(c, s, 1031, B.psh | B.ack, Array(cs[30..<60]))),  // overlapping retransmission
            (t0 + 5_000, false, tcp(s, c, 5001, B.psh | B.ack, subscribed)),  // retransmission
            (t0 + 6_000, false, tcp(s, c, 5001 + UInt32(subscribed.count), B.psh | B.ack, push)),
            (t0 + 7_000, true, tcp(client6, server6, 77, B.syn)),
            (t0 + 7_100, true, tcp(server6, client6, 99, B.syn | B.ack)),
            (t0 + 8_000, true, { link in B.packet(link, from: client6, to: server6, sequence: 78, flags: B.ack, payload: (try? Fixtures.frame("client_ack")) ?? []) }),
            (t0 + 9_000, false, tcp(tlsClient, s, 300, B.syn)),
            (t0 + 9_500, false, tcp(tlsClient, s, 301, B.psh | B.ack, [0x16, 0x03, 0x01, 0x00, 0x05, 0x01, 0x00, 0x00, 0x01, 0x00])),
            (t0 + 9_800, false, tcp(B.Host.v4(10, 0, 0, 2, port: 40_003), B.Host.v4(10, 0, 0, 1, port: 80), 1, B.psh | B.ack, Array("GET /".utf8))),
            (t0 + 10_000, false, tcp(c, s, 1001 + UInt32(cs.count), B.fin | B.ack)),
        ]
    }

    static let expectedFrames = [
        "2024-11-29T17:06:40.001Z 10.0.0.2:40000 → subscribe order://taxi/8812 request=1 since=7:41",
        "2024-11-29T17:06:40.003Z 10.0.0.2:40000 ← subscribed order://taxi/8812 3:11 request=9 recovered=yes state=in_trip "
            + "updated=2023-11-14T22:21:40.000Z driver=d-1 loc=90.000000,180.000000 missed=2",
        "2024-11-29T17:06:40.004Z 10.0.0.2:40000 → publish order://taxi/8812 → driver_arriving request=5 driver=driver-4711 "
            + "eta=240s loc=31.230416,121.473701 key=pub-1:8812:3 wants_receipts",
        "2024-11-29T17:06:40.004Z 10.0.0.2:40000 → ack order://taxi/8812 offset=3",
        "2024-11-29T17:06:40.006Z 10.0.0.2:40000 ← push order://taxi/8812 1:3 driver_assigned → driver_arriving "
            + "2024-11-29T17:06:40.000Z driver=driver-4711 eta=240s loc=31.230416,121.473701",
        "2024-11-29T17:06:40.008Z [::1]:40001 → ack order://taxi/8812 offset=3",
        "2024-11-29T17:06:40.009Z 10.0.0.3:40002 · TLS connection to 10.0.0.1:7070: encrypted, skipped",
    ]

    static let expectedSummary = [
        "summary: 3 connections (1 TLS, encrypted, skipped), 6 frames, 333 bytes, 0 malformed, 0 framing errors",
        "  frames by kind: client ack 2, client publish 1, client subscribe 1, server push 1, server subscribed 1",
        "  connection 1: 10.0.0.2:40000 → 10.0.0.1:7070: client 3 frames (118 bytes), server 2 frames (191 bytes), "
            + "2 segments out of order, 156 retransmitted bytes dropped, closed (FIN)",
        "  connection 2: [::1]:40001 → [::1]:7070: client 1 frames (24 bytes), server 0 frames (0 bytes), open at the end of the capture",
        "  connection 3: 10.0.0.3:40002 → 10.0.0.1:7070: TLS, encrypted, skipped (10 bytes from the client, 0 from the server), "
            + "open at the end of the capture",
        "  1 TCP connections on other ports ignored",
        "  packets without a TCP segment: 1 not TCP",
    ]

    func run(_ capture: [UInt8], _ options: [String] = []) async throws -> CLIResult {
        let scratch = try ScratchDirectory()
        defer { scratch.cleanup() }
        return await runCLI(["inspect", "pcap", try scratch.write("capture", capture)] + options)
    }

    @Test("reassembles reordered and retransmitted segments, IPv6 and skips TLS (pcap, Ethernet)")
    func ethernetPcap() async throws {
        var packets = try Self.scenario().map { ($0.0, $0.2(.ethernet)) }
        packets.insert((Self.t0 + 9_900, B.udp(from: Self.client, to: Self.server)), at: 15)
        let result = try await run(B.pcap(link: .ethernet, packets))
        #expect(result.code == 0, "\(result.err)")
        #expect(result.lines == Self.expectedFrames + Self.expectedSummary)
    }

    @Test("reads the same session from pcapng with an Ethernet and a nanosecond Linux SLL2 interface")
    func pcapng() async throws {
        var packets = try Self.scenario().map { time, isV6, build in
            (micros: time, interface: isV6 ? 1 : 0, bytes: build(isV6 ? .linuxSLL2 : .ethernet))
        }
        packets.insert((Self.t0 + 9_900, 0, B.udp(from: Self.client, to: Self.server)), at: 15)
        let result = try await run(B.pcapng(links: [.ethernet, .linuxSLL2], packets))
        #expect(result.lines == Self.expectedFrames + Self.expectedSummary)
        let json = try await run(B.pcapng(links: [.ethernet, .linuxSLL2], packets), ["--json"])
        #expect(json.lines.first == "{\"captured_at\":\"2024-11-29T17:06:40.001Z\",\"captured_at_us\":1732900000001000,"
            + "\"client\":\"10.0.0.2:40000\",\"byte_offset\":0,\"direction\":\"client\",\"kind\":\"subscribe\",\"length\":30,"
            + "\"route\":\"order://taxi/8812\",\"request_id\":1,\"since_epoch\":7,\"since_offset\":41}")
        #expect(json.lines.last?.hasPrefix("{\"summary\":{\"format\":\"pcapng\",\"connections\":3,\"tls_connections\":1,\"frames\":6,") == true)
    }

    @Test("decodes the same frames over every link type", arguments: [B.Link.null, .linuxSLL, .linuxSLL2, .raw, .ethernet])
    func linkTypes(link: B.Link) async throws {
        let packets = try Self.scenario().filter { !$0.1 }.map { ($0.0, $0.2(link)) }
        let result = try await run(B.pcap(link: link, packets))
        #expect(result.lines.prefix(5) == Self.expectedFrames.prefix(5))
        #expect(result.lines.first { $0.hasPrefix("summary:") }
            == "summary: 2 connections (1 TLS, encrypted, skipped), 5 frames, 309 bytes, 0 malformed, 0 framing errors")
    }

    @Test("reports bytes missing from the capture and resumes at the next frame")
    func gap() async throws {
        let frames = try Fixtures.frame("server_push_typical") + Fixtures.frame("server_push_first_record") + Fixtures.frame("server_disconnect")
        let packets: [(UInt64, [UInt8])] = [
            (Self.t0, B.packet(.ethernet, from: Self.server, to: Self.client, sequence: 10, flags: B.ack, payload: Array(frames[0..<20]))),
            // bytes 20..<40 were not captured
            (Self.t0 + 1000, B.packet(.ethernet, from: Self.server, to: Self.client, sequence: 50, flags: B.ack, payload: Array(frames[40...]))),
        ]
        let result = try await run(B.pcap(link: .ethernet, packets))
        #expect(result.code == 1)
        #expect(result.lines.prefix(5) == [
            "2024-11-29T17:06:40.000Z 10.0.0.2:40000 · truncated frame: length prefix announces 64 bytes, only 19 remain",
            "2024-11-29T17:06:40.001Z 10.0.0.2:40000 · gap: 20 bytes missing from the capture at stream byte 20",
            "2024-11-29T17:06:40.001Z 10.0.0.2:40000 · resynchronised: skipped 25 bytes from byte 40 after the gap",
            "2024-11-29T17:06:40.001Z 10.0.0.2:40000 ← push order://taxi/8812 7:1 ∅ → created 2024-11-29T17:06:40.001Z",
            "2024-11-29T17:06:40.001Z 10.0.0.2:40000 ← disconnect code=slow(3002) reason=\"outbound queue full\" reconnect_after=1500ms",
        ])
    }

    @Test("refuses files that are not captures")
    func notACapture() async throws {
        let result = try await run(Array("hello world".utf8))
        #expect(result.code == 1)
        #expect(result.err.hasSuffix("not a pcap or pcapng file (magic number 0x68656c6c; tcpdump -w and tshark -w write these)\n"))
    }
}
