import LonglinkCore
import LonglinkProtobuf
import Testing
import LonglinkTestSupport

@Suite("ProtobufFrameCodec bad input", .ownThreads)
struct ProtobufFrameCodecBadInputTests {
    let codec = ProtobufFrameCodec()

    func body(of frame: ServerFrame) throws -> [UInt8] {
        var buffer = ByteBuffer()
        try codec.encode(frame, into: &buffer)
        return try FrameReader().nextFrame(in: &buffer) { Array($0) }!
    }

    func body(of frame: ClientFrame) throws -> [UInt8] {
        var buffer = ByteBuffer()
        try codec.encode(frame, into: &buffer)
        return try FrameReader().nextFrame(in: &buffer) { Array($0) }!
    }

    func decodeServer(_ body: [UInt8]) throws(FrameError) -> ServerFrame {
        var buffer = ByteBuffer()
        buffer.writeVarint(UInt64(body.count))
        buffer.writeBytes(body)
        guard let frame = try codec.decodeNextServerFrame(from: &buffer) else { throw .malformed("incomplete") }
        return frame
    }

    func decodeClient(_ body: [UInt8]) throws(FrameError) -> ClientFrame {
        var buffer = ByteBuffer()
        buffer.writeVarint(UInt64(body.count))
        buffer.writeBytes(body)
        guard let frame = try codec.decodeNextClientFrame(from: &buffer) else { throw .malformed("incomplete") }
        return frame
    }

    /// A length-delimited field.
    func field(_ number: UInt64, _ bytes: [UInt8]) -> [UInt8] {
        var buffer = ByteBuffer()
        buffer.writeVarint(number << 3 | 2)
        buffer.writeVarint(UInt64(bytes.count))
        buffer.writeBytes(bytes)
        return buffer.readableArray
    }

    /// A varint field.
    func field(_ number: UInt64, varint value: UInt64) -> [UInt8] {
        var buffer = ByteBuffer()
        buffer.writeVarint(number << 3)
        buffer.writeVarint(value)
        return buffer.readableArray
    }

    // MARK: Framing

    @Test("a length prefix of 11 bytes is a varint overflow")
    func elevenBytePrefix() {
        var buffer = ByteBuffer(bytes: [UInt8](repeating: 0x81, count: 10) + [0x01])
        #expect(throws: FrameError.varintOverflow) { try codec.decodeNextServerFrame(from: &buffer) }
    }

    @Test("a length prefix of 2^63 is oversized, with nothing allocated for it")
    func prefixTwoToThe63() {
        var buffer = ByteBuffer()
        buffer.writeVarint(1 << 63)
        #expect(throws: FrameError.oversized(length: 1 << 63, limit: 65_536)) {
            try codec.decodeNextClientFrame(from: &buffer)
        }
    }

    @Test("a length prefix above the maximum is oversized before the body arrives")
    func prefixAboveMax() {
        var buffer = ByteBuffer()
        buffer.writeVarint(4_097)
        #expect(throws: FrameError.oversized(length: 4_097, limit: 4_096)) {
            try codec.decodeNextServerFrame(from: &buffer, reader: FrameReader(maxFrameSize: 4_096))
        }
    }

    @Test("a zero-length frame is empty")
    func zeroLength() {
        var buffer = ByteBuffer(bytes: [0x00])
        #expect(throws: FrameError.empty) { try codec.decodeNextServerFrame(from: &buffer) }
        #expect(throws: FrameError.empty) {
            try [UInt8]().withUnsafeBytes { bytes throws(FrameError) in try codec.decodeClientFrame(body: bytes) }
        }
    }

    // MARK: Bodies

    @Test("a body cut short anywhere is truncated", arguments: [1, 2, 5, 20, 40])
    func truncatedBody(cut: Int) throws {
        let full = try body(of: Samples.typicalPush())
        #expect(throws: FrameError.truncated) { try decodeServer(Array(full.dropLast(cut))) }
    }

    @Test("a client body cut short is truncated")
    func truncatedClientBody() throws {
        let full = try body(of: ClientFrame.publish(PublishRequest(
            requestID: 1, orderID: "8812", line: "taxi", targetState: "paid", idempotencyKey: "k")))
        #expect(throws: FrameError.truncated) { try decodeClient(Array(full.dropLast(3))) }
    }

    @Test("garbage is malformed", arguments: [
        Array("GET / HTTP/1.1\r\n".utf8),  // wire type 7
        [0x08, 0x01],  // field 1 (push) as a varint instead of a message
        [0x0A, 0x02, 0x08, 0x01],  // push.route as a varint
        [0x03],  // a group: wire type 3
        [0x00, 0x00],  // field number 0
    ])
    func garbage(_ bytes: [UInt8]) {
        #expect {
            try decodeServer(bytes)
        } throws: { error in
            guard case FrameError.malformed = error else { return false }
            return true
        }
    }

    @Test("a string that is not UTF-8 is malformed")
    func notUTF8() {
        let push = field(1, [0xC3, 0x28]) + field(5, varint: 5)
        #expect {
            try decodeServer(field(1, push))
        } throws: { error in
            guard case FrameError.malformed = error else { return false }
            return true
        }
    }

    @Test("a frame kind nobody knows is an unknown frame kind", arguments: [24, 99, 536_870_911])  // 20-22: presence frames, 23: heartbeat
    func unknownKind(_ number: UInt64) {
        #expect(throws: FrameError.unknownFrameKind) { try decodeServer(field(number, [])) }
        #expect(throws: FrameError.unknownFrameKind) { try decodeClient(field(number, varint: 1)) }
    }

    @Test("a frame without a kind (only unknown fields) is an unknown frame kind")
    func noKind() {
        #expect(throws: FrameError.unknownFrameKind) { try decodeServer(field(40, varint: 3) + field(41, [1, 2])) }
    }

    @Test("a frame sent the wrong way is an unknown frame kind")
    func wrongDirection() throws {
        for (_, frame) in Samples.serverFrames {
            let bytes = try body(of: frame)
            #expect(throws: FrameError.unknownFrameKind) { try decodeClient(bytes) }
        }
        for (_, frame) in Samples.clientFrames {
            let bytes = try body(of: frame)
            #expect(throws: FrameError.unknownFrameKind) { try decodeServer(bytes) }
        }
    }

    @Test("unknown fields are tolerated, at the top level and inside messages")
    func unknownFields() throws {
        let frame = Samples.typicalPush()
        let bytes = try body(of: frame)
        // Top level: an unknown varint and an unknown length-delimited field around the push.
        #expect(try decodeServer(field(50, varint: 7) + bytes + field(51, [1, 2, 3])) == frame)
        // Inside the push message and inside its fields message.
        #expect(bytes[0] == 0x0A && bytes[1] < 0x80)
        let push = Array(bytes[2...])
        #expect(try decodeServer(field(1, push + field(63, varint: 1) + field(64, Array("future".utf8)))) == frame)
        let fieldsMessage = field(9, field(1, Array("d".utf8)) + field(30, varint: 1))
        let pushWithFields = field(1, Array("order://taxi/1".utf8)) + field(5, varint: 1) + fieldsMessage
        guard case .push(let decoded) = try decodeServer(field(1, pushWithFields)) else {
            Issue.record("not a push")
            return
        }
        #expect(decoded.record.fields == OrderFields(driverID: "d"))
    }

    // MARK: Values

    @Test("a pushed route that does not parse is an invalid value")
    func badPushRoute() {
        let push = field(1, Array("not a route".utf8)) + field(5, varint: 5)
        #expect {
            try decodeServer(field(1, push))
        } throws: { error in
            guard case FrameError.invalidValue = error else { return false }
            return true
        }
    }

    @Test("a pushed route that carries no records (not order://, not config://) is an invalid value")
    func configPushRoute() {
        let push = field(1, Array("other://app/flag".utf8)) + field(5, varint: 5)
        #expect {
            try decodeServer(field(1, push))
        } throws: { error in
            guard case FrameError.invalidValue = error else { return false }
            return true
        }
    }

    @Test("invalid values in a valid message", arguments: [
        // A push without a target state.
        [0x0A, 0x10] + Array("\n\u{0E}order://taxi/1".utf8),
        // A state number outside the catalog.
        [0x0A, 0x12] + Array("\n\u{0E}order://taxi/1".utf8) + [0x28, 0x63],
        // State 0 (unspecified).
        [0x0A, 0x12] + Array("\n\u{0E}order://taxi/1".utf8) + [0x28, 0x00],
        // A location with a latitude only.
        [0x0A, 0x16] + Array("\n\u{0E}order://taxi/1".utf8) + [0x28, 0x01, 0x4A, 0x02, 0x18, 0x02],
        // A publish result without an outcome.
        [0x2A, 0x02, 0x08, 0x01],
        // A subscribed frame with a snapshot on a route that carries no records.
        [0x32, 0x16] + Array("\u{12}\u{10}other://app/flag".utf8) + [0x1A, 0x02, 0x08, 0x01],
        // A delivery receipt whose route does not parse.
        [0x22, 0x05, 0x0A, 0x03, 0x61, 0x62, 0x63],
    ] as [[UInt8]])
    func invalidValues(_ bytes: [UInt8]) {
        #expect {
            try decodeServer(bytes)
        } throws: { error in
            guard case FrameError.invalidValue = error else { return false }
            return true
        }
    }

    @Test("a publish without a target state is an invalid value")
    func publishWithoutTarget() {
        #expect {
            try decodeClient(field(13, field(2, Array("8812".utf8))))
        } throws: { error in
            guard case FrameError.invalidValue = error else { return false }
            return true
        }
    }

    // MARK: Encoding

    @Test("a string holding a NUL byte cannot be encoded, and nothing is written")
    func nulInString() {
        var buffer = ByteBuffer()
        #expect {
            try codec.encode(ServerFrame.error(ErrorFrame(code: .internal, message: "a\u{0}b")), into: &buffer)
        } throws: { error in
            guard case FrameError.unencodable = error else { return false }
            return true
        }
        #expect {
            try codec.encode(ClientFrame.refresh(RefreshRequest(token: "\u{0}")), into: &buffer)
        } throws: { error in
            guard case FrameError.unencodable = error else { return false }
            return true
        }
        #expect(buffer.readableBytes == 0)
    }

    @Test("a push on a route that carries no records cannot be encoded")
    func pushOnConfigRoute() throws {
        let route = try Route(parsing: "other://app/flag")
        let push = Push(route: route, record: Samples.firstPush.record)
        var buffer = ByteBuffer()
        #expect {
            try codec.encode(ServerFrame.push(push), into: &buffer)
        } throws: { error in
            guard case FrameError.unencodable = error else { return false }
            return true
        }
    }
}
