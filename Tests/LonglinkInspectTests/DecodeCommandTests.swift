import LonglinkTestSupport
import Foundation
import LonglinkInspect
import Testing

/// `longlink inspect decode`: golden outputs from committed frames, and exact messages for bad input.
@Suite("inspect decode", .ownThreads)
struct DecodeCommandTests {
    @Test("prints the golden session as lines, JSON lines and verbose dumps", arguments: [
        ([String](), "session.txt"), (["--json"], "session.jsonl"), (["--verbose"], "session.verbose.txt"),
    ])
    func golden(options: [String], golden: String) async throws {
        let result = await runCLI(["inspect", "decode", try Fixtures.url("session.bin").path] + options)
        #expect(result.code == 0, "\(result.err)")
        #expect(result.out == (try Fixtures.text(golden)))
        #expect(result.err == "9 frames, 576 bytes, 0 malformed, 0 framing errors (server push 3, client ack 1, "
            + "client publish 1, client subscribe 1, server disconnect 1, server publish_result 1, server subscribed 1)\n")
    }

    @Test("reads hex and base64 text to the same frames, and forced directions")
    func textInputs() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.cleanup() }
        let bytes = try Fixtures.bytes("session.bin")
        let hex = bytes.map { String(format: "%02x", $0) }.joined(separator: " ")
        let hexFile = try scratch.write("session.hex", Array(("0x" + hex + "\n").utf8))
        let base64File = try scratch.write("session.b64", Array(Data(bytes).base64EncodedString(options: .lineLength64Characters).utf8))
        let expected = try Fixtures.text("session.txt")
        #expect(await runCLI(["inspect", "decode", "--hex", hexFile]).out == expected)
        #expect(await runCLI(["inspect", "decode", "--base64", base64File]).out == expected)

        let push = try scratch.write("push.bin", try Fixtures.frame("server_push_typical"))
        let asServer = await runCLI(["inspect", "decode", "--direction", "server", push])
        #expect(asServer.lines == [
            "@0 server push order://taxi/8812 1:3 driver_assigned → driver_arriving 2024-11-29T17:06:40.000Z "
                + "driver=driver-4711 eta=240s loc=31.230416,121.473701",
        ])
        let asClient = await runCLI(["inspect", "decode", "--direction", "client", push])
        #expect(asClient.code == 1)
        #expect(asClient.lines == [
            "@0 client malformed ClientFrame (64 bytes): unknown frame kind (newer protocol or wrong direction); "
                + "raw: 1:{1:\"order://taxi/8812\" 2:3 3:1 4:1732900000000 5:6 7:5 9:{1:\"driver-4711\" 2:240 3:62460832 4:242947402}}",
        ])
    }

    /// Decodes `bytes` with `options`; returns the output lines and the exit code.
    func decode(_ bytes: [UInt8], _ options: [String] = []) async throws -> ([String], Int32) {
        let scratch = try ScratchDirectory()
        defer { scratch.cleanup() }
        let result = await runCLI(["inspect", "decode", try scratch.write("input.bin", bytes)] + options)
        return (result.lines, result.code)
    }

    @Test("reports a bad varint prefix with its offset and resynchronises on the next frame")
    func badVarint() async throws {
        let ack = try Fixtures.frame("client_ack")
        let (lines, code) = try await decode([UInt8](repeating: 0xFF, count: 11) + ack)
        #expect(code == 1)
        #expect(lines == [
            "@0 bad length prefix: varint longer than 10 bytes or above 2^64",
            "@11 resynchronised: skipped 11 bytes from byte 0",
            "@11 client ack order://taxi/8812 offset=3",
        ])
    }

    @Test("reports an oversized prefix against --max-frame-size, or stops with --no-resync")
    func oversized() async throws {
        let ack = try Fixtures.frame("client_ack")
        let push = try Fixtures.frame("server_push_typical")
        let (lines, _) = try await decode(ack + [0x81, 0x80, 0x04] + push)
        #expect(lines == [
            "@0 client ack order://taxi/8812 offset=3",
            "@24 oversized frame: length prefix announces 65537 bytes, above the limit of 65536",
            "@27 resynchronised: skipped 3 bytes from byte 24",
            "@27 server push order://taxi/8812 1:3 driver_assigned → driver_arriving 2024-11-29T17:06:40.000Z "
                + "driver=driver-4711 eta=240s loc=31.230416,121.473701",
        ])
        let (small, _) = try await decode(push, ["--max-frame-size", "32"])
        #expect(small == [
            "@0 oversized frame: length prefix announces 64 bytes, above the limit of 32",
            "@0 stopped: no frame boundary found in the remaining 65 bytes",
        ])
        let (strict, code) = try await decode(ack + [0x81, 0x80, 0x04] + push, ["--no-resync"])
        #expect(code == 1)
        #expect(strict == [
            "@0 client ack order://taxi/8812 offset=3",
            "@24 oversized frame: length prefix announces 65537 bytes, above the limit of 65536",
            "@24 stopped at the first framing error (resynchronisation is off)",
        ])
    }

    @Test("reports truncated frames and prefixes at the end of the input")
    func truncated() async throws {
        let ack = try Fixtures.frame("client_ack")
        let push = try Fixtures.frame("server_push_typical")
        let (cut, code) = try await decode(ack + Array(push.prefix(11)))
        #expect(code == 1)
        #expect(cut == [
            "@0 client ack order://taxi/8812 offset=3",
            "@24 truncated frame: length prefix announces 64 bytes, only 10 remain",
        ])
        let (prefix, _) = try await decode(ack + [0x80])
        #expect(prefix == ["@0 client ack order://taxi/8812 offset=3", "@24 truncated length prefix: the input ends inside the varint"])
        let (empty, _) = try await decode([0x00] + ack)
        #expect(empty == [
            "@0 empty frame: length prefix is 0", "@1 resynchronised: skipped 1 bytes from byte 0",
            "@1 client ack order://taxi/8812 offset=3",
        ])
    }

    @Test("skips text garbage between frames and finds the next frame")
    func garbage() async throws {
        let ack = try Fixtures.frame("client_ack")
        let disconnect = try Fixtures.frame("server_disconnect")
        // 'G' (71) announces a 71-byte frame that fits: its body is not a message, so the frame was not one.
        let garbage = Array("GET / HTTP/1.1\r\nHost: example\r\n\r\n".utf8)
        let (lines, code) = try await decode(ack + garbage + disconnect + ack + disconnect)
        #expect(code == 1)
        #expect(lines == [
            "@0 client ack order://taxi/8812 offset=3",
            "@24 not a frame: the 71-byte body is not a protobuf message (body byte 7: end-group tag of field 10 outside its group)",
            "@57 resynchronised: skipped 33 bytes from byte 24",
            "@57 server disconnect code=slow(3002) reason=\"outbound queue full\" reconnect_after=1500ms",
            "@87 client ack order://taxi/8812 offset=3",
            "@111 server disconnect code=slow(3002) reason=\"outbound queue full\" reconnect_after=1500ms",
        ])
        // Garbage announcing more than the rest of the input: reported as truncated, then skipped.
        let (long, _) = try await decode(Array("zzz".utf8) + ack)
        #expect(long == [
            "@0 truncated frame: length prefix announces 122 bytes, only 26 remain",
            "@3 resynchronised: skipped 3 bytes from byte 0",
            "@3 client ack order://taxi/8812 offset=3",
        ])
        let (nothing, _) = try await decode(Array("\u{01}\u{7F}".utf8))
        #expect(nothing == [
            "@0 malformed frame (1 bytes): not a protobuf message (byte 0: invalid wire type 7 (field 15))"
        ])
    }

    @Test("shows unknown fields raw next to the decoded frame")
    func unknownFields() async throws {
        var body = try Fixtures.bytes("server_disconnect.bin")
        body += [0xA0, 0x01, 0x05]  // field 20, varint 5: a newer top-level field
        body[1] += 2  // the Disconnect message grows by a field 9, varint 42 (a newer field)
        body.insert(contentsOf: [0x48, 0x2A], at: 2)
        let (lines, code) = try await decode(prefixed(body))
        #expect(code == 0)
        #expect(lines == [
            "@0 server disconnect code=slow(3002) reason=\"outbound queue full\" reconnect_after=1500ms "
                + "[unknown disconnect.9:42 (varint)] [unknown 20:5 (varint)]",
        ])
        let (json, _) = try await decode(prefixed(body), ["--json"])
        #expect(json.first?.hasSuffix(
            "\"unknown\":[{\"path\":\"disconnect\",\"field\":9,\"wire_type\":0,\"value\":\"42\"},"
                + "{\"path\":\"\",\"field\":20,\"wire_type\":0,\"value\":\"5\"}]}") == true)
    }

    @Test("refuses bad text input with the character position")
    func badText() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.cleanup() }
        let hex = await runCLI(["inspect", "decode", "--hex", try scratch.write("bad.hex", Array("0a 0g".utf8))])
        #expect(hex.code == 1)
        #expect(hex.err == "longlink inspect: cannot read hex input: input character 4: 'g' is not a hex digit\n")
        let odd = await runCLI(["inspect", "decode", "--hex", try scratch.write("odd.hex", Array("0a0".utf8))])
        #expect(odd.err == "longlink inspect: cannot read hex input: input character 2: odd number of hex digits (a byte is two digits)\n")
        let b64 = await runCLI(["inspect", "decode", "--base64", try scratch.write("bad.b64", Array("AA*A".utf8))])
        #expect(b64.err == "longlink inspect: cannot read base64 input: input character 2: '*' is not a base64 character\n")
        let usage = await runCLI(["inspect", "decode", "--direction", "sideways", "x"])
        #expect(usage.code == 2)
    }

    @Test("never traps on random bytes", arguments: 0..<4)
    func randomBytes(seed: Int) async throws {
        var generator = SplitMix(seed: UInt64(seed))
        let session = try Fixtures.bytes("session.bin")
        for _ in 0..<50 {
            var bytes = session
            for _ in 0..<8 { bytes[Int(generator.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: generator.next()) }
            let events = FrameStreamDecoder().decode(bytes)
            #expect(!events.isEmpty)
            _ = events.map { FrameRenderer(style: .verbose).render($0) + FrameRenderer(style: .json).render($0) }
        }
    }
}

