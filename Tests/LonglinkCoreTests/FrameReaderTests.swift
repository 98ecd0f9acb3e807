import LonglinkCore
import Testing
import LonglinkTestSupport

@Suite("FrameReader", .ownThreads)
struct FrameReaderTests {
    let reader = FrameReader()

    /// Takes the next frame's body bytes, or nil.
    func next(_ buffer: inout ByteBuffer, _ reader: FrameReader? = nil) throws(FrameError) -> [UInt8]? {
        try (reader ?? self.reader).nextFrame(in: &buffer) { body in Array(body) }
    }

    func varint(_ value: UInt64) -> [UInt8] {
        var buffer = ByteBuffer()
        buffer.writeVarint(value)
        return buffer.readableArray
    }

    @Test("takes one complete frame and consumes its prefix and body")
    func oneFrame() throws {
        var buffer = ByteBuffer(bytes: [3, 0xA, 0xB, 0xC, 2])
        #expect(try next(&buffer) == [0xA, 0xB, 0xC])
        #expect(buffer.readableArray == [2])
        #expect(try next(&buffer) == nil)
        #expect(buffer.readableArray == [2])
    }

    @Test("returns nil and consumes nothing while the prefix or the body is incomplete")
    func incomplete() throws {
        let body = [UInt8](repeating: 7, count: 300)
        let frame = varint(300) + body
        #expect(frame.count == 302)
        var buffer = ByteBuffer()
        for (index, byte) in frame.enumerated() {
            buffer.writeByte(byte)
            if index < frame.count - 1 {
                #expect(try next(&buffer) == nil)
                #expect(buffer.readableBytes == index + 1)
            }
        }
        #expect(try next(&buffer) == body)
        #expect(buffer.readableBytes == 0)
    }

    @Test("a prefix of 11 bytes is a varint overflow, detected at the tenth byte")
    func elevenByteVarint() {
        var buffer = ByteBuffer(bytes: [UInt8](repeating: 0x80, count: 10))
        #expect(throws: FrameError.varintOverflow) { try next(&buffer) }
        buffer.writeByte(0x01)
        #expect(throws: FrameError.varintOverflow) { try next(&buffer) }
        #expect(buffer.readableBytes == 11)
    }

    @Test("a ten-byte prefix above 2^64 − 1 is a varint overflow")
    func overflow() {
        var buffer = ByteBuffer(bytes: [UInt8](repeating: 0xFF, count: 9) + [0x02])
        #expect(throws: FrameError.varintOverflow) { try next(&buffer) }
    }

    @Test("a prefix of 2^63 is oversized, and so is the largest varint")
    func hugePrefix() {
        var buffer = ByteBuffer(bytes: varint(1 << 63))
        #expect(varint(1 << 63).count == 10)
        #expect(throws: FrameError.oversized(length: 1 << 63, limit: 65_536)) { try next(&buffer) }
        var largest = ByteBuffer(bytes: varint(.max))
        #expect(throws: FrameError.oversized(length: .max, limit: 65_536)) { try next(&largest) }
    }

    @Test("a prefix above the maximum is refused before any body byte arrives")
    func aboveMax() {
        var buffer = ByteBuffer(bytes: varint(65_537))
        #expect(throws: FrameError.oversized(length: 65_537, limit: 65_536)) { try next(&buffer) }
        var small = ByteBuffer(bytes: [11])
        #expect(throws: FrameError.oversized(length: 11, limit: 10)) { try next(&small, FrameReader(maxFrameSize: 10)) }
    }

    @Test("a body of exactly the maximum size is accepted")
    func exactlyMax() throws {
        var buffer = ByteBuffer(bytes: varint(10) + [UInt8](repeating: 1, count: 10))
        #expect(try next(&buffer, FrameReader(maxFrameSize: 10))?.count == 10)
    }

    @Test("a zero-length frame is empty, also as a non-minimal varint")
    func zeroLength() {
        var buffer = ByteBuffer(bytes: [0])
        #expect(throws: FrameError.empty) { try next(&buffer) }
        var padded = ByteBuffer(bytes: [0x80, 0x00])
        #expect(throws: FrameError.empty) { try next(&padded) }
    }

    @Test("a non-minimal prefix is accepted")
    func nonMinimal() throws {
        var buffer = ByteBuffer(bytes: [0x82, 0x80, 0x00, 9, 8])
        #expect(try next(&buffer) == [9, 8])
    }

    @Test("a frame whose body throws is still consumed, so the next frame can be read")
    func bodyThrows() throws {
        var buffer = ByteBuffer(bytes: [1, 0xEE, 1, 0x01])
        #expect(throws: FrameError.malformed("x")) {
            try reader.nextFrame(in: &buffer) { (_) throws(FrameError) -> Int in throw .malformed("x") }
        }
        #expect(try next(&buffer) == [0x01])
    }

    @Test("10,000 frames in one buffer come out in order")
    func manyFrames() throws {
        var buffer = ByteBuffer()
        for index in 0..<10_000 {
            let body = [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: index % 200 + 1)
            buffer.writeVarint(UInt64(body.count))
            buffer.writeBytes(body)
        }
        var count = 0
        while let body = try next(&buffer) {
            #expect(body.count == count % 200 + 1)
            #expect(body.first == UInt8(truncatingIfNeeded: count))
            count += 1
        }
        #expect(count == 10_000)
        #expect(buffer.readableBytes == 0)
    }
}
