import Glibc
import LonglinkCore
import LonglinkLoop
import Testing

/// `SendRing` on real loopback TCP sockets: many queues sent with one submission, each result what its socket
/// took, a full socket answered with `EAGAIN` (never left waiting), a reset peer answered with its error.
@Suite struct SendRingTests {
    /// Reads what `fd` has until `count` bytes arrived (or 5 s passed).
    private func receive(_ fd: CInt, count: Int) -> [UInt8] {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let deadline = MonotonicClock.nanoseconds() + 5_000_000_000
        while received.count < count && MonotonicClock.nanoseconds() < deadline {
            var pending = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            _ = poll(&pending, 1, 100)
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n > 0 { received.append(contentsOf: buffer[0..<n]) }
        }
        return received
    }

    private func bytes(_ count: Int, seed: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ seed) } }

    @Test func sendsEveryQueueInOneSubmissionAndEachResultIsWhatItsSocketTook() throws {
        let ring = try SendRing(sends: 64, stagingBytes: 64 * 1024, stagingLimitPerSend: 4096)
        var pairs: [(client: CInt, server: CInt)] = []
        defer { for pair in pairs { Socket.close(pair.client); Socket.close(pair.server) } }
        var queues: [OutboundQueue] = []
        var expected: [[UInt8]] = []
        for index in 0..<40 {
            pairs.append(try loopbackPair())
            // Two chunks and a reply, the first partly written already: what is sent starts after the written part.
            var queue = OutboundQueue()
            let first = bytes(100 + index, seed: index)
            let second = bytes(37, seed: index + 1)
            queue.append(first)
            queue.append(second)
            queue.appendReply([0xAA, UInt8(index)])
            queue.consume(10)
            queues.append(queue)
            expected.append(Array(first[10...]) + second + [0xAA, UInt8(index)])
        }
        var sends: [Int] = []
        for index in queues.indices {
            #expect(ring.accepts(queuedBytes: queues[index].queuedBytes))
            let send = ring.stage(&queues[index], to: pairs[index].server)
            sends.append(try #require(send))
        }
        #expect(ring.queued == 40)
        #expect(ring.submit() == nil)
        #expect(ring.queued == 0)
        for index in queues.indices {
            let sent = ring.result(of: sends[index])
            #expect(Int(sent) == expected[index].count)
            queues[index].consume(Int(sent))
            #expect(queues[index].isEmpty)
            #expect(receive(pairs[index].client, count: expected[index].count) == expected[index])
        }
    }

    @Test func aFullSocketAnswersEAGAINAndKeepsItsBytes() throws {
        let ring = try SendRing(sends: 8, stagingBytes: 16 * 1024, stagingLimitPerSend: 8192)
        let pair = try loopbackPair(clientReceiveBuffer: 4096, serverSendBuffer: 4096)
        defer { Socket.close(pair.client); Socket.close(pair.server) }
        // Fill the socket until the kernel takes nothing more.
        let filler = [UInt8](repeating: 7, count: 65_536)
        var filled = 0
        while true {
            let n = filler.withUnsafeBytes { send(pair.server, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL)) }
            if n <= 0 { break }
            filled += n
        }
        var queue = OutboundQueue()
        queue.append(bytes(3000, seed: 5))
        let staged = ring.stage(&queue, to: pair.server)
        let first = try #require(staged)
        #expect(ring.submit() == nil)
        // Not left waiting in the kernel: the result is there when submit returns.
        #expect(ring.result(of: first) == -EAGAIN)
        #expect(queue.queuedBytes == 3000)
        // Once the reader drains, the same bytes go out whole.
        #expect(receive(pair.client, count: filled).count == filled)
        let restaged = ring.stage(&queue, to: pair.server)
        let again = try #require(restaged)
        #expect(ring.submit() == nil)
        #expect(ring.result(of: again) == 3000)
        #expect(receive(pair.client, count: 3000) == bytes(3000, seed: 5))
    }

    @Test func aResetPeerAnswersItsError() throws {
        let ring = try SendRing(sends: 8)
        let pair = try loopbackPair()
        defer { Socket.close(pair.server) }
        // Closing with unread bytes makes the kernel reset the connection.
        _ = [UInt8](repeating: 1, count: 10).withUnsafeBytes { send(pair.server, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        usleep(20_000)
        Socket.close(pair.client)
        usleep(20_000)
        var queue = OutboundQueue()
        queue.append(bytes(100, seed: 1))
        var results: [Int32] = []
        for _ in 0..<3 {
            let staged = ring.stage(&queue, to: pair.server)
            #expect(staged == 0)
            #expect(ring.submit() == nil)
            results.append(ring.result(of: 0))
        }
        #expect(results.contains { $0 == -ECONNRESET || $0 == -EPIPE }, "results \(results)")
    }

    @Test func aFullRingOrFullStagingTakesNoMore() throws {
        let ring = try SendRing(sends: 4, stagingBytes: 1000, stagingLimitPerSend: 600)
        let pair = try loopbackPair()
        defer { Socket.close(pair.client); Socket.close(pair.server) }
        var big = OutboundQueue()
        big.append(bytes(700, seed: 2))
        #expect(!ring.accepts(queuedBytes: big.queuedBytes))
        var small = OutboundQueue()
        small.append(bytes(400, seed: 3))
        let stagedFirst = ring.stage(&small, to: pair.server)
        let stagedSecond = ring.stage(&small, to: pair.server)
        // 800 of 1,000 staging bytes used: a third 400-byte queue does not fit.
        let stagedThird = ring.stage(&small, to: pair.server)
        #expect(stagedFirst == 0 && stagedSecond == 1 && stagedThird == nil)
        #expect(ring.submit() == nil)
        #expect(ring.result(of: 0) == 400 && ring.result(of: 1) == 400)
        var tiny = OutboundQueue()
        tiny.append([1])
        for expected in 0..<ring.capacity {
            let index = ring.stage(&tiny, to: pair.server)
            #expect(index == expected)
        }
        let beyond = ring.stage(&tiny, to: pair.server)
        #expect(beyond == nil)
        #expect(ring.submit() == nil)
        #expect(receive(pair.client, count: 800 + ring.capacity).count == 800 + ring.capacity)
    }

    @Test func copyUnwrittenTakesTheFrontWithoutConsumingIt() {
        var queue = OutboundQueue()
        queue.append([1, 2, 3, 4])
        queue.appendReply([5, 6])
        queue.append([7, 8, 9])
        queue.consume(1)
        var small = [UInt8](repeating: 0, count: 4)
        let copied = small.withUnsafeMutableBytes { queue.copyUnwritten(into: $0) }
        #expect(copied == 4 && small == [2, 3, 4, 5])
        var all = [UInt8](repeating: 0, count: 16)
        let copiedAll = all.withUnsafeMutableBytes { queue.copyUnwritten(into: $0) }
        #expect(copiedAll == 8 && Array(all[0..<8]) == [2, 3, 4, 5, 6, 7, 8, 9])
        #expect(queue.queuedBytes == 8)
        queue.consume(8)
        #expect(queue.isEmpty)
    }

    @Test func anEmptySubmissionIsNothing() throws {
        let ring = try SendRing()
        #expect(ring.submit() == nil)
        #expect(ring.queued == 0)
        var empty = OutboundQueue()
        let staged = ring.stage(&empty, to: 0)
        #expect(staged == nil)
    }
}
