import LonglinkCore
import LonglinkProtobuf
import Testing
import LonglinkTestSupport

/// Issue 14, item 5: a varint in a frame body longer than ten bytes or above 2^64 − 1 is a protocol error.
/// protobuf-c refuses the long ones but keeps the low 64 bits of a ten-byte varint whose last byte is above 1
/// (and the low 32 bits for a 32-bit field), so such a frame used to be accepted as another value.
@Suite("ProtobufFrameCodec: varints in frame bodies are at most ten bytes and at most 2^64 − 1", .ownThreads)
struct VarintBoundsTests {
    let codec = ProtobufFrameCodec()

    /// Nine bytes of seven one-bits each, then `last`: 2^64 − 1 when `last` is 1, above 2^64 − 1 when it is more.
    static func tenByteVarint(last: UInt8) -> [UInt8] { [UInt8](repeating: 0xFF, count: 9) + [last] }

    func decodeClient(_ body: [UInt8]) throws(FrameError) -> ClientFrame {
        var buffer = ByteBuffer()
        buffer.writeVarint(UInt64(body.count))
        buffer.writeBytes(body)
        guard let frame = try codec.decodeNextClientFrame(from: &buffer) else { throw .malformed("incomplete") }
        return frame
    }

    func decodeServer(_ body: [UInt8]) throws(FrameError) -> ServerFrame {
        var buffer = ByteBuffer()
        buffer.writeVarint(UInt64(body.count))
        buffer.writeBytes(body)
        guard let frame = try codec.decodeNextServerFrame(from: &buffer) else { throw .malformed("incomplete") }
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

    /// A varint field whose value is given as raw varint bytes.
    func field(_ number: UInt64, rawVarint: [UInt8]) -> [UInt8] {
        var buffer = ByteBuffer()
        buffer.writeVarint(number << 3)
        return buffer.readableArray + rawVarint
    }

    /// `ClientFrame.ack` (12) with the offset (Ack field 2) given as raw varint bytes.
    func ack(offset: [UInt8]) -> [UInt8] {
        field(12, field(1, Array("order://taxi/1".utf8)) + field(2, rawVarint: offset))
    }

    func isMalformed<T>(_ body: () throws -> T) -> Bool {
        do {
            _ = try body()
            return false
        } catch {
            if case .malformed? = error as? FrameError { return true }
            return false
        }
    }

    @Test("a ten-byte varint above 2^64 − 1 in a uint64 field (ack offset) is malformed")
    func aboveTwoToThe64() {
        for last: UInt8 in [0x02, 0x7F] {
            #expect(isMalformed { try decodeClient(ack(offset: Self.tenByteVarint(last: last))) }, "last byte \(last)")
        }
    }

    @Test("the largest ten-byte varint, 2^64 − 1, is still accepted")
    func largest() throws {
        #expect(try decodeClient(ack(offset: Self.tenByteVarint(last: 0x01))) == .ack(Ack(route: "order://taxi/1", offset: .max)))
    }

    @Test("a varint of eleven bytes in a body is malformed")
    func elevenBytes() {
        let eleven = [UInt8](repeating: 0x80, count: 10) + [0x01]
        #expect(isMalformed { try decodeClient(ack(offset: eleven)) })
    }

    @Test("a ten-byte varint above 2^64 − 1 in a nested uint32 field (publish request id) is malformed")
    func nestedUInt32() {
        let publish = field(1, rawVarint: Self.tenByteVarint(last: 0x7F)) + field(2, Array("o-1".utf8))
            + field(3, Array("taxi".utf8)) + field(5, Array("created".utf8))
        #expect(isMalformed { try decodeClient(field(13, publish)) })
    }

    @Test("a field key above 2^32 − 1 is malformed")
    func keyAbove32Bits() {
        // Field number 2^29 (one past the largest), length-delimited and empty: a five-byte key of 2^32 + 2.
        var buffer = ByteBuffer()
        buffer.writeVarint(UInt64(1) << 32 | 2)
        #expect(isMalformed { try decodeClient(buffer.readableArray + [0x00] + field(14, [])) })
    }

    @Test("bytes that look like an over-long varint inside a bytes field are only bytes")
    func insideBytes() throws {
        let payload = Self.tenByteVarint(last: 0x7F) + [UInt8](repeating: 0x80, count: 12)
        var fields = OrderFields()
        fields.payload = payload
        let frame = ClientFrame.publish(PublishRequest(requestID: 7, orderID: "o-1", line: "taxi", targetState: "created", fields: fields))
        var buffer = ByteBuffer()
        try codec.encode(frame, into: &buffer)
        #expect(try codec.decodeNextClientFrame(from: &buffer) == frame)
    }

    @Test("a server frame with a push offset above 2^64 − 1, or an ETA above it two levels down, is malformed")
    func serverFrames() {
        let route = field(1, Array("order://taxi/1".utf8))
        let state: [UInt8] = [0x28, 0x05]  // Push.to_state = 5
        #expect(isMalformed { try decodeServer(field(1, route + field(2, rawVarint: Self.tenByteVarint(last: 0x02)) + state)) })
        let eta = field(9, field(2, rawVarint: Self.tenByteVarint(last: 0x03)))  // Push.fields.eta_seconds
        #expect(isMalformed { try decodeServer(field(1, route + state + eta)) })
        #expect((try? decodeServer(field(1, route + state + field(9, field(2, rawVarint: [0x2A]))))) != nil)
    }
}
