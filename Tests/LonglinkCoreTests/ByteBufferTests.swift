import LonglinkCore
import Testing
import LonglinkTestSupport

@Suite("ByteBuffer", .ownThreads)
struct ByteBufferTests {
    @Test("writes protobuf varints of every length")
    func varints() {
        let cases: [(UInt64, [UInt8])] = [
            (0, [0x00]), (1, [0x01]), (127, [0x7F]), (128, [0x80, 0x01]), (300, [0xAC, 0x02]),
            (1 << 63, [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01]),
            (.max, [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]),
        ]
        for (value, bytes) in cases {
            var buffer = ByteBuffer()
            #expect(buffer.writeVarint(value) == bytes.count)
            #expect(buffer.readableArray == bytes, "\(value)")
        }
    }

    @Test("grows to fit writes and keeps the bytes in order")
    func grows() {
        var buffer = ByteBuffer(capacity: 4)
        for byte in 0..<200 { buffer.writeByte(UInt8(byte)) }
        buffer.writeBytes([200, 201])
        [UInt8]([202, 203]).withUnsafeBytes { buffer.writeBytes($0) }
        #expect(buffer.readableArray == (0...203).map { UInt8($0) })
        #expect(buffer.capacity >= 204)
    }

    @Test("reading moves the reader index; reading everything resets both indices")
    func reading() {
        var buffer = ByteBuffer(bytes: [1, 2, 3, 4])
        buffer.moveReaderIndex(forwardBy: 1)
        #expect(buffer.readerIndex == 1)
        #expect(buffer.withReadableBytes { Array($0) } == [2, 3, 4])
        buffer.moveReaderIndex(forwardBy: 3)
        #expect(buffer.readerIndex == 0 && buffer.writerIndex == 0)
    }

    @Test("discardReadBytes compacts without changing the readable bytes")
    func discard() {
        var buffer = ByteBuffer(bytes: [1, 2, 3, 4, 5])
        buffer.moveReaderIndex(forwardBy: 2)
        let capacity = buffer.capacity
        buffer.discardReadBytes()
        #expect(buffer.readerIndex == 0)
        #expect(buffer.readableArray == [3, 4, 5])
        #expect(buffer.capacity == capacity)
    }

    @Test("writeWithUnsafeMutableBytes moves the writer index by what the body wrote")
    func unsafeWrite() {
        var buffer = ByteBuffer()
        let written = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: 8) { raw in
            #expect(raw.count >= 8)
            raw[0] = 0xAB
            raw[1] = 0xCD
            return 2
        }
        #expect(written == 2)
        #expect(buffer.readableArray == [0xAB, 0xCD])
    }

    @Test("clear keeps the storage; shrink gives back what a burst took")
    func clearAndShrink() {
        var buffer = ByteBuffer(capacity: 64)
        buffer.writeBytes([UInt8](repeating: 1, count: 1_000))
        let grown = buffer.capacity
        buffer.clear()
        #expect(buffer.readableBytes == 0 && buffer.capacity == grown)
        buffer.writeBytes([9])
        buffer.shrink(to: 64)
        #expect(buffer.capacity == 64)
        #expect(buffer.readableArray == [9])
    }

    @Test("two buffers are equal when their readable bytes are")
    func equality() {
        var a = ByteBuffer(bytes: [0, 1, 2])
        a.moveReaderIndex(forwardBy: 1)
        let b = ByteBuffer(bytes: [1, 2])
        #expect(a == b)
        #expect(a != ByteBuffer(bytes: [1, 3]))
    }

    @Test("rewriting the readable tail in place keeps what the body keeps and leaves the bytes before it alone")
    func rewriteTail() {
        var buffer = ByteBuffer(bytes: [1, 2, 3, 10, 11, 12, 13])
        buffer.moveReaderIndex(forwardBy: 1)
        buffer.rewriteReadableTail(4) { raw in
            #expect(Array(raw) == [10, 11, 12, 13])
            raw[0] = 20
            raw[1] = 21
            return 2
        }
        #expect(buffer.readableArray == [2, 3, 20, 21])
        buffer.writeBytes([5])
        #expect(buffer.readableArray == [2, 3, 20, 21, 5])
        var emptied = ByteBuffer(bytes: [7, 8])
        emptied.rewriteReadableTail(2) { _ in 0 }
        #expect(emptied.readableBytes == 0 && emptied.readerIndex == 0 && emptied.writerIndex == 0)
    }
}
