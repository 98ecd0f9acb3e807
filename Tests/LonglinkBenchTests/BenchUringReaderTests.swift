import Glibc
@testable import LonglinkBench
import LonglinkCore
import LonglinkLoop
import Synchronization
import Testing

/// The io_uring reader (`--reader io_uring`): real loopback TCP sockets read by a real ring on a real loop, and
/// the choice of reader when the kernel refuses io_uring.
@Suite("io_uring reader")
struct BenchUringReaderTests {
    /// Byte `index` of stream `stream`: a pattern that a lost, repeated or reordered chunk breaks.
    static func patternByte(_ stream: Int, _ index: Int) -> UInt8 { UInt8(truncatingIfNeeded: index &* 31 &+ index >> 9 &+ stream &* 7) }

    /// Collects what the ring delivers for one socket and checks it against the pattern as it arrives.
    final class Collector: BenchRingReadable {
        let stream: Int
        var received = 0
        var mismatches = 0
        var ended = false
        var endError: String?
        var callsAfterEnd = 0

        init(stream: Int) { self.stream = stream }

        func ringDidReceive(_ bytes: UnsafeRawBufferPointer, at now: UInt64) {
            if ended { callsAfterEnd += 1 }
            for byte in bytes {
                if byte != BenchUringReaderTests.patternByte(stream, received) { mismatches += 1 }
                received += 1
            }
        }

        func ringDidEnd(error: String?) {
            if ended { callsAfterEnd += 1 }
            ended = true
            endError = error
        }
    }

    /// The collectors of one test, attached to its loop.
    final class Collectors {
        var all: [Collector] = []
    }

    struct Progress: Sendable, Equatable {
        var received: [Int]
        var mismatches: Int
        var ended: [Bool]
        var errors: [String]
        var callsAfterEnd: Int
        var rearms: Int
        var attached: Int
    }

    /// Writes all of `bytes` to the blocking socket `fd`.
    static func writeAll(_ fd: CInt, _ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress!, $0.count) }
            if written < 0 && errno == EINTR { continue }
            try #require(written > 0, "write: \(String(cString: strerror(errno)))")
            offset += written
        }
    }

    static func chunk(stream: Int, from start: Int, count: Int) -> [UInt8] {
        (start..<(start + count)).map { patternByte(stream, $0) }
    }

    @Test(
        "every byte written to loopback TCP sockets reaches its reader once and in order, the peer's close ends it, and a reader short of buffers re-arms its receive",
        .enabled(if: BenchUringReader.unavailableReason() == nil, "io_uring is available on this kernel"),
        arguments: [BenchUringReader.bufferCount, 8]
    )
    func deliversInOrder(bufferCount: UInt32) throws {
        let streams = 3
        let before = 100_000  // written before the ring reads the socket (more than 8 buffers of 4 KiB at once)
        let total = 300_000
        let loops = try BenchLoops(threads: 1)
        defer { loops.shutdown() }
        let listener = try Socket.listen(host: "127.0.0.1", port: 0)
        defer { Socket.close(listener) }
        let address = try SocketAddress(ipAddress: "127.0.0.1", port: try Socket.localPort(listener))

        // Clients on the loop, their accepted peers here (blocking, written from this thread).
        let clients = loops.collect { context -> [CInt] in
            (0..<streams).compactMap { _ in try? Socket.connect(to: address).fd }
        }.first ?? []
        try #require(clients.count == streams)
        var peers: [CInt] = []
        let acceptDeadline = MonotonicClock.nanoseconds() + 5_000_000_000
        while peers.count < streams && MonotonicClock.nanoseconds() < acceptDeadline {
            if let peer = try Socket.accept(listener) { peers.append(peer) } else { usleep(1_000) }
        }
        try #require(peers.count == streams)
        defer { for peer in peers { Socket.close(peer) } }
        for (stream, peer) in peers.enumerated() {
            try Socket.setNonBlocking(peer, false)
            try Self.writeAll(peer, Self.chunk(stream: stream, from: 0, count: before))
        }

        // The ring starts reading sockets that already hold data.
        let opened = loops.collect { context -> Bool in
            guard let reader = BenchUringReader.of(context, bufferCount: bufferCount) else { return false }
            let collectors = Collectors()
            context.attach(collectors)
            for (stream, fd) in clients.enumerated() {
                let collector = Collector(stream: stream)
                collectors.all.append(collector)
                _ = reader.attach(fd: fd, reader: collector)
            }
            return true
        }
        try #require(opened == [true])

        // The rest in chunks of varying size, then each peer closes.
        var offsets = Array(repeating: before, count: streams)
        var size = 1
        while offsets.contains(where: { $0 < total }) {
            for stream in 0..<streams where offsets[stream] < total {
                let count = min(size, total - offsets[stream])
                try Self.writeAll(peers[stream], Self.chunk(stream: stream, from: offsets[stream], count: count))
                offsets[stream] += count
            }
            size = size * 3 % 9_001 + 1
        }
        for peer in peers { _ = shutdown(peer, CInt(SHUT_WR)) }

        var progress: Progress?
        let deadline = MonotonicClock.nanoseconds() + 10_000_000_000
        while MonotonicClock.nanoseconds() < deadline {
            progress = loops.collect { context -> Progress in
                let collectors = context.attachment(Collectors.self)?.all ?? []
                let reader = context.attachment(BenchUringReader.self)
                return Progress(
                    received: collectors.map(\.received),
                    mismatches: collectors.map(\.mismatches).reduce(0, +),
                    ended: collectors.map(\.ended),
                    errors: collectors.compactMap(\.endError),
                    callsAfterEnd: collectors.map(\.callsAfterEnd).reduce(0, +),
                    rearms: reader?.rearms ?? -1,
                    attached: reader?.attachedCount ?? -1
                )
            }.first
            if let progress, progress.ended.allSatisfy({ $0 }) { break }
            usleep(10_000)
        }
        let final = try #require(progress)
        #expect(final.received == Array(repeating: total, count: streams))
        #expect(final.mismatches == 0)
        #expect(final.ended == Array(repeating: true, count: streams))
        #expect(final.errors.isEmpty, "the peer's close ends the receive without an error")
        #expect(final.callsAfterEnd == 0)
        #expect(final.attached == 0)
        if bufferCount == 8 {
            #expect(final.rearms > 0, "8 buffers of 4 KiB cannot hold 100 KB: the kernel ends the receive and it is re-armed")
        }
        _ = loops.collect { context in context.detach(Collectors.self) }
        for fd in clients { Socket.close(fd) }
    }

    @Test(
        "a detached socket's later bytes reach nobody, and its slot serves the next socket",
        .enabled(if: BenchUringReader.unavailableReason() == nil, "io_uring is available on this kernel")
    )
    func detachStopsDelivery() throws {
        let loops = try BenchLoops(threads: 1)
        defer { loops.shutdown() }
        var pair: [CInt] = [-1, -1]
        var second: [CInt] = [-1, -1]
        try #require(socketpair(AF_UNIX, CInt(SOCK_STREAM.rawValue), 0, &pair) == 0)
        try #require(socketpair(AF_UNIX, CInt(SOCK_STREAM.rawValue), 0, &second) == 0)
        defer { for fd in pair + second { close(fd) } }
        let first = pair[0]
        let next = second[0]
        let slots = loops.collect { context -> [UInt32] in
            guard let reader = BenchUringReader.of(context) else { return [] }
            let collectors = Collectors()
            context.attach(collectors)
            let one = Collector(stream: 0)
            let two = Collector(stream: 0)
            collectors.all = [one, two]
            let token = reader.attach(fd: first, reader: one)
            reader.detach(token)
            let reused = reader.attach(fd: next, reader: two)
            return [token.slot, reused.slot, token.generation == reused.generation ? 1 : 0]
        }.first ?? []
        #expect(slots.count == 3 && slots[0] == slots[1] && slots[2] == 0, "the slot is reused with a new generation")
        try Self.writeAll(pair[1], Self.chunk(stream: 0, from: 0, count: 1_000))
        try Self.writeAll(second[1], Self.chunk(stream: 0, from: 0, count: 1_000))
        var counts: [Int] = []
        let deadline = MonotonicClock.nanoseconds() + 5_000_000_000
        while MonotonicClock.nanoseconds() < deadline {
            counts = loops.collect { context in context.attachment(Collectors.self)?.all.map(\.received) ?? [] }.first ?? []
            if counts.count == 2 && counts[1] == 1_000 { break }
            usleep(5_000)
        }
        #expect(counts == [0, 1_000])
        _ = loops.collect { context in context.detach(Collectors.self) }
    }

    @Test("with io_uring refused, the default reader falls back to epoll and says why; asking for io_uring then fails")
    func fallsBackWhenUnavailable() throws {
        let refused = { "io_uring_setup: Operation not permitted" }
        let fallback = try BenchReader.resolve(nil, probe: refused)
        #expect(fallback.reader == .epoll)
        #expect(fallback.note?.contains("io_uring_setup: Operation not permitted") == true)
        #expect(throws: BenchError.self) { try BenchReader.resolve(.ioUring, probe: refused) }
        var probed = false
        let epoll = try BenchReader.resolve(.epoll) {
            probed = true
            return nil
        }
        #expect(epoll.reader == .epoll && epoll.note == nil && !probed, "--reader epoll does not touch io_uring")
        let available = try BenchReader.resolve(nil) { nil }
        #expect(available.reader == .ioUring && available.note == nil)
        let paced = try BenchReader.resolve(nil, paced: true) { nil }
        #expect(paced.reader == .epoll && paced.note == nil, "a paced fan-out reads with epoll unless asked")
        #expect(try BenchReader.resolve(.ioUring, paced: true) { nil }.reader == .ioUring)
    }

    @Test("this kernel's probe agrees with opening a loop's ring")
    func probeMatchesRing() throws {
        let reason = BenchUringReader.unavailableReason()
        let loops = try BenchLoops(threads: 1)
        defer { loops.shutdown() }
        let opened = loops.collect { context in BenchUringReader.of(context) != nil }
        #expect(opened == [reason == nil], "\(reason ?? "available")")
    }
}
