import Glibc
import LonglinkCore
import LonglinkLoop
import LonglinkTestSupport
import Testing

/// Loop-side sender for the slow-peer test: flushes before sleeping (Redis's beforeSleep), asks for `.write` only
/// when a flush left bytes queued, and drops it once the queue drains.
private final class Sender: SelectorHandler {
    let transport: PlainTransport
    unowned let context: LoopContext
    var registration: RegistrationID!
    var queue = OutboundQueue()
    let log: Shared<SenderLog>

    init(fd: CInt, context: LoopContext, log: Shared<SenderLog>) throws {
        transport = PlainTransport(fd: fd)
        self.context = context
        self.log = log
        registration = try context.register(fd: fd, interest: .none, handler: self)
        context.addBeforeSleep { [unowned self] in
            if !self.queue.isEmpty && !self.waitingForWritability { self.flush() }
        }
    }

    var waitingForWritability: Bool { context.interest(of: registration)?.contains(.write) == true }

    func handleEvent(_ event: SelectorEvent) {
        if event.contains(.write) { flush() }
    }

    func flush() {
        do {
            let before = queue.queuedBytes
            let result = try transport.write(&queue)
            log.update {
                $0.flushes += 1
                if case .processed(let n) = result, n > 0, n < before { $0.shortWrites += 1 }
                if case .wouldBlock = result { $0.wouldBlocks += 1 }
            }
            if queue.isEmpty {
                if waitingForWritability {
                    try context.reregister(registration, interest: .none)
                    log.update { $0.writeInterestRemoved += 1 }
                }
                log.update { $0.drained = true }
            } else if !waitingForWritability {
                // Only here, after a short write or EAGAIN, does the loop watch for EPOLLOUT.
                try context.reregister(registration, interest: .write)
                log.update { $0.writeInterestAdded += 1 }
            }
        } catch {
            log.update { $0.error = "\(error)" }
        }
    }
}

struct SenderLog: Sendable {
    var flushes = 0
    var shortWrites = 0
    var wouldBlocks = 0
    var writeInterestAdded = 0
    var writeInterestRemoved = 0
    var drained = false
    var error: String?
    var finalInterest: SelectorEvent?
}

@Suite("OutboundQueue", .ownThreads)
struct OutboundQueueTests {
    @Test("tracks queued bytes and partial progress through chunks")
    func accounting() throws {
        var queue = OutboundQueue()
        let shared: [UInt8] = Array(0..<10)
        queue.append(shared)
        queue.append([])
        queue.append(shared)
        queue.append([42])
        #expect(queue.queuedBytes == 21)
        #expect(queue.chunkCount == 3)
        queue.consume(4)
        #expect(queue.withFirstChunk { Array($0) } == Array(4..<10))
        queue.consume(10)
        #expect(queue.withFirstChunk { Array($0) } == Array(4..<10))
        #expect(queue.chunkCount == 2)
        queue.consume(7)
        #expect(queue.isEmpty)
        #expect(queue.withFirstChunk { Array($0) } == nil)
        #expect(shared == Array(0..<10))  // the shared chunk itself is never modified
    }

    @Test("a slow peer receives every byte in order, with EPOLLOUT requested only after short writes")
    func slowPeer() throws {
        let group = try EventLoopGroup(numberOfThreads: 1)
        defer { group.shutdownGracefully() }
        let (client, server) = try loopbackPair(clientReceiveBuffer: 32 * 1024, serverSendBuffer: 32 * 1024)
        defer { close(client) }
        let log = Shared(SenderLog())

        // 4 MiB in 300 chunks, where every third chunk is the same shared array (one encoded push, many queues).
        let sharedChunk: [UInt8] = (0..<9_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        var chunks: [[UInt8]] = []
        for index in 0..<300 {
            if index % 3 == 0 {
                chunks.append(sharedChunk)
            } else {
                chunks.append((0..<(10_000 + index * 7)).map { UInt8(truncatingIfNeeded: $0 &+ index) })
            }
        }
        let expected = chunks.flatMap { $0 }
        let sending = chunks

        group.loops[0].execute { context in
            let sender = try! Sender(fd: server, context: context, log: log)
            for chunk in sending { sender.queue.append(chunk) }
            // A timer keeps `sender` alive and reports the final interest once drained.
            context.schedule(every: .milliseconds(5)) {
                if sender.queue.isEmpty {
                    let interest = context.interest(of: sender.registration)
                    log.update { $0.finalInterest = interest }
                }
            }
        }

        // Start reading only once the sender has filled the small buffers and is waiting for EPOLLOUT.
        #expect(eventually { log.value.writeInterestAdded >= 1 })
        try Socket.setNonBlocking(client, false)
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var received: [UInt8] = []
        received.reserveCapacity(expected.count)
        var piece = [UInt8](repeating: 0, count: 4096)
        while received.count < expected.count {
            let count = piece.withUnsafeMutableBytes { read(client, $0.baseAddress, 4096) }
            guard count > 0 else { break }  // EOF, error or the 10 s receive timeout: fail below
            received.append(contentsOf: piece[0..<count])
        }

        #expect(received.count == expected.count)
        #expect(received == expected)
        #expect(eventually { log.value.finalInterest != nil })
        let final = log.value
        #expect(final.error == nil)
        #expect(final.drained)
        #expect(final.shortWrites + final.wouldBlocks >= final.writeInterestAdded)
        #expect(final.writeInterestAdded >= 1)
        #expect(final.writeInterestRemoved == final.writeInterestAdded)
        #expect(final.finalInterest == SelectorEvent.none)
    }

    @Test("one large chunk, written alone with send, reaches a slow peer in order through short writes")
    func oneChunkSlowPeer() throws {
        let group = try EventLoopGroup(numberOfThreads: 1)
        defer { group.shutdownGracefully() }
        let (client, server) = try loopbackPair(clientReceiveBuffer: 32 * 1024, serverSendBuffer: 32 * 1024)
        defer { close(client) }
        let log = Shared(SenderLog())
        // One shared chunk of 1 MiB: every write is of the first (only) chunk, most from an offset into it.
        let chunk: [UInt8] = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ $0 >> 8) }
        let sending = chunk

        group.loops[0].execute { context in
            let sender = try! Sender(fd: server, context: context, log: log)
            sender.queue.append(sending)
            context.schedule(every: .milliseconds(5)) {
                if sender.queue.isEmpty {
                    let interest = context.interest(of: sender.registration)
                    log.update { $0.finalInterest = interest }
                }
            }
        }

        #expect(eventually { log.value.writeInterestAdded >= 1 })
        try Socket.setNonBlocking(client, false)
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var received: [UInt8] = []
        received.reserveCapacity(chunk.count)
        var piece = [UInt8](repeating: 0, count: 4096)
        while received.count < chunk.count {
            let count = piece.withUnsafeMutableBytes { read(client, $0.baseAddress, 4096) }
            guard count > 0 else { break }  // EOF, error or the 10 s receive timeout: fail below
            received.append(contentsOf: piece[0..<count])
        }

        #expect(received == chunk)
        #expect(eventually { log.value.finalInterest != nil })
        let final = log.value
        #expect(final.error == nil)
        #expect(final.drained)
        #expect(final.shortWrites >= 1)
        #expect(final.writeInterestRemoved == final.writeInterestAdded)
        #expect(final.finalInterest == SelectorEvent.none)
    }
}
