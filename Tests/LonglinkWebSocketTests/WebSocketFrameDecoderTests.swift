import LonglinkCore
import LonglinkTestSupport
import Testing

@testable import LonglinkWebSocket

/// Feeds `chunks` to a decoder as separate reads, the way a socket would deliver them.
private struct Feed {
    var decoder = WebSocketFrameDecoder()
    var data: [UInt8] = []
    var controls: [WebSocketFrameDecoder.Control] = []
    var limit = 1 << 20

    mutating func take(_ bytes: [UInt8]) throws(WebSocketProtocolError) {
        var copy = bytes
        var failure: WebSocketProtocolError?
        var kept = 0
        copy.withUnsafeMutableBytes { raw in
            do throws(WebSocketProtocolError) {
                kept = try decoder.decode(raw, maxMessageSize: limit, controls: &controls)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        data += copy[0..<kept]
    }

    /// Takes every chunk; returns the first error.
    mutating func takeAll(_ chunks: [[UInt8]]) -> WebSocketProtocolError? {
        for chunk in chunks {
            do throws(WebSocketProtocolError) { try take(chunk) } catch { return error }
        }
        return nil
    }
}

@Suite("WebSocket frame decoder (client frames, in place)", .ownThreads)
struct WebSocketFrameDecoderTests {
    @Test("a masked binary frame yields its unmasked payload")
    func binaryFrame() throws {
        var feed = Feed()
        let payload = Array(0..<200).map { UInt8($0 & 0xFF) }
        try feed.take(ClientFrames.binary(payload))
        #expect(feed.data == payload)
        #expect(feed.controls.isEmpty)
    }

    @Test("frames split at every byte boundary decode to the same payload (headers straddling reads)")
    func everySplit() throws {
        let payload = Array(0..<300).map { UInt8(($0 * 7) & 0xFF) }
        let stream = ClientFrames.binary(Array(payload[0..<20])) + ClientFrames.ping([1, 2, 3])
            + ClientFrames.binary(Array(payload[20...]), fin: false) + ClientFrames.continuation([9, 9])
        for split in 1..<stream.count {
            var feed = Feed()
            try feed.take(Array(stream[0..<split]))
            try feed.take(Array(stream[split...]))
            #expect(feed.data == payload + [9, 9], "split at \(split)")
            #expect(feed.controls == [.ping([1, 2, 3])], "split at \(split)")
        }
        var bytewise = Feed()
        for byte in stream { try bytewise.take([byte]) }
        #expect(bytewise.data == payload + [9, 9])
    }

    @Test("the 16-bit and 64-bit length forms (126 and 127) carry their lengths, including non-minimal ones")
    func lengthForms() throws {
        for (size, form) in [(126, 2), (65_535, 2), (65_536, 8), (100, 2), (10, 8)] {
            var feed = Feed()
            let payload = [UInt8](repeating: 0xAB, count: size)
            try feed.take(ClientFrames.frame(0x2, payload, longForm: form))
            #expect(feed.data == payload, "size \(size) in the \(form)-byte form")
        }
    }

    @Test("a fragmented message with a ping between its fragments")
    func fragmentsWithControl() throws {
        var feed = Feed()
        let error = feed.takeAll([
            ClientFrames.binary([1, 2], fin: false), ClientFrames.ping([7]), ClientFrames.continuation([3], fin: false),
            ClientFrames.continuation([4]), ClientFrames.binary([5]),
        ])
        #expect(error == nil)
        #expect(feed.data == [1, 2, 3, 4, 5])
        #expect(feed.controls == [.ping([7])])
    }

    @Test(
        "protocol violations fail with their close codes",
        arguments: [
            ("unmasked", ClientFrames.frame(0x2, [1], masked: false), UInt16(1002)),
            ("reserved bit 1", ClientFrames.frame(0x2, [1], rsv: 4), 1002),
            ("reserved bit 3", ClientFrames.frame(0x2, [1], rsv: 1), 1002),
            ("opcode 3", ClientFrames.frame(0x3, [1]), 1002),
            ("opcode 11", ClientFrames.frame(0xB, []), 1002),
            ("text", ClientFrames.frame(0x1, Array("hi".utf8)), 1003),
            ("continuation first", ClientFrames.continuation([1]), 1002),
            ("fragmented ping", ClientFrames.frame(0x9, [], fin: false), 1002),
            ("ping of 126 bytes", ClientFrames.frame(0x9, [UInt8](repeating: 0, count: 126)), 1002),
            ("close of 1 byte", ClientFrames.frame(0x8, [3]), 1002),
            ("close code 1005", ClientFrames.close(1005), 1002),
            ("close code 999", ClientFrames.close(999), 1002),
            ("close code 2000", ClientFrames.close(2000), 1002),
            ("close reason not UTF-8", ClientFrames.frame(0x8, [0x03, 0xE8, 0xFF, 0xFE]), 1007),
        ]
    )
    func violations(_ name: String, _ bytes: [UInt8], _ code: UInt16) {
        var feed = Feed()
        let error = feed.takeAll([bytes])
        #expect(error?.code.rawValue == code, "\(name): \(String(describing: error))")
    }

    @Test("a new message inside a fragmented one is refused (1002)")
    func interleavedMessages() {
        var feed = Feed()
        let error = feed.takeAll([ClientFrames.binary([1], fin: false), ClientFrames.binary([2])])
        #expect(error?.code == .protocolError)
        #expect(feed.data == [1])
    }

    @Test("a message over the limit is refused (1009), also when only its fragments together pass it")
    func oversized() {
        var single = Feed(limit: 100)
        #expect(single.takeAll([ClientFrames.binary([UInt8](repeating: 1, count: 101))])?.code == .messageTooBig)
        var exact = Feed(limit: 100)
        #expect(exact.takeAll([ClientFrames.binary([UInt8](repeating: 1, count: 100))]) == nil)
        var fragmented = Feed(limit: 100)
        let error = fragmented.takeAll([
            ClientFrames.binary([UInt8](repeating: 1, count: 60), fin: false),
            ClientFrames.continuation([UInt8](repeating: 1, count: 41)),
        ])
        #expect(error?.code == .messageTooBig)
        // The limit is per message: two messages of 60 are fine.
        var two = Feed(limit: 100)
        #expect(two.takeAll([ClientFrames.binary([UInt8](repeating: 1, count: 60)), ClientFrames.binary([UInt8](repeating: 1, count: 60))]) == nil)
        // A 64-bit length is refused from its header alone, before any payload arrives.
        var header = Feed(limit: 100)
        let huge = Array(ClientFrames.frame(0x2, [UInt8](repeating: 0, count: 70_000)).prefix(14))
        #expect(header.takeAll([huge])?.code == .messageTooBig)
    }

    @Test("a close frame ends decoding; its code and reason come out")
    func close() {
        var feed = Feed()
        let error = feed.takeAll([ClientFrames.binary([1]), ClientFrames.close(1000, "bye") + ClientFrames.binary([2])])
        #expect(error == nil)
        #expect(feed.data == [1])
        #expect(feed.controls == [.close(.normal, "bye")])
        var empty = Feed()
        _ = empty.takeAll([ClientFrames.close(nil)])
        #expect(empty.controls == [.close(nil, "")])
        var library = Feed()
        _ = library.takeAll([ClientFrames.close(3007, "admin")])
        #expect(library.controls == [.close(WebSocketCloseCode(rawValue: 3007), "admin")])
    }
}

@Suite("WebSocket server frames", .ownThreads)
struct WebSocketFrameEncoderTests {
    @Test("server frames are final, unmasked, with the shortest length form")
    func headers() {
        for (size, header) in [(0, [UInt8(0x82), 0]), (125, [0x82, 125]), (126, [0x82, 126, 0, 126]), (65_535, [0x82, 126, 0xFF, 0xFF]),
                               (65_536, [0x82, 127, 0, 0, 0, 0, 0, 1, 0, 0])] {
            let frame = WebSocketFrameEncoder.frame(.binary, [UInt8](repeating: 5, count: size))
            #expect(Array(frame.prefix(header.count)) == header, "size \(size)")
            #expect(frame.count == header.count + size)
        }
    }

    @Test("disconnect codes become close codes with the reason; a long reason is cut on a character boundary")
    func closeMessages() {
        let framer = WebSocketMessageFramer.self
        #expect(framer.closeMessage(code: 3002, reason: "slow") == [0x88, 6, 0x0B, 0xBA] + Array("slow".utf8))
        #expect(Array(framer.closeMessage(code: 12, reason: "").prefix(4)) == [0x88, 2, 0x03, 0xF3], "outside 3000–4999: 1011")
        let long = framer.closeMessage(code: 3000, reason: String(repeating: "é", count: 100))
        #expect(long.count == 2 + 2 + 122)
        #expect(String(validating: long[4...], as: UTF8.self) != nil)
        #expect(framer.message(carrying: [1, 2, 3]) == [0x82, 3, 1, 2, 3])
    }
}
