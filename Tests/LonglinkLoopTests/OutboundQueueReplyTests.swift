import LonglinkLoop
import LonglinkTestSupport
import Testing

/// Replies gathered into one private chunk, and dropping what no write has started on.
@Suite("OutboundQueue replies", .ownThreads)
struct OutboundQueueReplyTests {
    /// Everything queued, in order, read without consuming.
    func contents(_ queue: OutboundQueue) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: queue.queuedBytes)
        let copied = bytes.withUnsafeMutableBytes { queue.copyFront(into: $0) }
        return Array(bytes[0..<copied])
    }

    @Test("a burst of small replies shares one chunk per 4 KiB, after a shared push that is never modified")
    func gathered() {
        var queue = OutboundQueue()
        let push: [UInt8] = [9, 9, 9]
        queue.append(push)
        for _ in 0..<3_000 { queue.appendReply([1, 2, 3]) }
        #expect(queue.queuedBytes == 3 + 9_000)
        #expect(queue.chunkCount == 1 + 3)  // 4,095 + 4,095 + 810 bytes of replies
        #expect(push == [9, 9, 9])
        queue.append(push)
        queue.appendReply([4])
        #expect(queue.chunkCount == 6)  // a reply after a shared chunk starts a private one
        #expect(contents(queue) == push + Array([UInt8]([1, 2, 3]).repeated(3_000)) + push + [4])
    }

    @Test("a reply added to a partly written private chunk keeps the bytes not yet written in order")
    func partlyWritten() {
        var queue = OutboundQueue()
        queue.appendReply([1, 2, 3, 4])
        queue.consume(2)
        queue.appendReply([5, 6])
        #expect(queue.chunkCount == 1)
        #expect(contents(queue) == [3, 4, 5, 6])
        queue.consume(4)
        #expect(queue.isEmpty)
        queue.appendReply([7])
        #expect(contents(queue) == [7])
    }

    @Test("removeUnstarted keeps the unwritten rest of a partly written frame and drops the frames after it")
    func removeUnstarted() {
        var queue = OutboundQueue()
        queue.append([1, 2, 3, 4])
        queue.append([5, 6])
        queue.appendReply([7])
        queue.consume(1)
        queue.removeUnstarted()
        #expect(queue.queuedBytes == 3)
        #expect(contents(queue) == [2, 3, 4])
        queue.appendReply([8])
        #expect(contents(queue) == [2, 3, 4, 8])
        queue.consume(4)
        queue.append([1])
        queue.removeUnstarted()  // nothing written yet: everything goes
        #expect(queue.isEmpty && queue.chunkCount == 0)
    }
}

extension Array {
    /// The array repeated `count` times.
    fileprivate func repeated(_ count: Int) -> [Element] { (0..<count).flatMap { _ in self } }
}
