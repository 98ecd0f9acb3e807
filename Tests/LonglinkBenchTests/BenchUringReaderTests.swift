import Dispatch
import Glibc
@testable import LonglinkBench
import LonglinkCore
import LonglinkLoop
import Synchronization
import LonglinkTestSupport
import Testing

/// The io_uring reader (`--reader io_uring`): real loopback TCP sockets read by a real ring on a real loop, and
/// the choice of reader when the kernel refuses io_uring.
@Suite("io_uring reader", .ownThreads)
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

    /// The loop side of a closed-loop exchange, like the publisher with a window of one: it sends a byte, and each
    /// byte echoed back through the ring releases the next, `rounds` times.
    final class Pinger: BenchRingReadable {
        let fd: CInt
        let rounds: Int
        var sent = 0
        var received = 0
        var mismatches = 0
        var endError: String?

        init(fd: CInt, rounds: Int) {
            self.fd = fd
            self.rounds = rounds
        }

        func sendNext() {
            var byte = UInt8(truncatingIfNeeded: sent)
            if Glibc.write(fd, &byte, 1) == 1 { sent += 1 }
        }

        func ringDidReceive(_ bytes: UnsafeRawBufferPointer, at now: UInt64) {
            for byte in bytes {
                if byte != UInt8(truncatingIfNeeded: received) { mismatches += 1 }
                received += 1
            }
            if received == sent && sent < rounds { sendNext() }
        }

        func ringDidEnd(error: String?) { endError = error ?? "closed" }
    }

    final class Flag: Sendable {
        private let value = Atomic<Bool>(false)
        func set() { value.store(true, ordering: .releasing) }
        var isSet: Bool { value.load(ordering: .acquiring) }
    }

    /// The calling thread's id (the last part of /proc/thread-self), nil where /proc is not mounted.
    static func currentThreadID() -> String? {
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = buffer.withUnsafeMutableBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { readlink("/proc/thread-self", $0.baseAddress!, $0.count - 1) }
        }
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count], as: UTF8.self).split(separator: "/").last.map(String.init)
    }

    /// What thread `tid` of this process is in, from /proc/self/task/TID/syscall: "running", or the number of the
    /// system call it is blocked in and its arguments (nil when the file cannot be read).
    static func blockedCall(tid: String) -> [Substring]? {
        let fd = open("/proc/self/task/\(tid)/syscall", O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 512)
        let count = read(fd, &buffer, buffer.count)
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count], as: UTF8.self).split(whereSeparator: { $0 == " " || $0 == "\n" })
    }

    /// The system calls a loop sleeps in when it sleeps in epoll (the timeout is their fourth argument).
    #if arch(x86_64)
    static let epollWaits: Set<Int> = [232, 281]  // epoll_wait, epoll_pwait
    #elseif arch(arm64)
    static let epollWaits: Set<Int> = [22]  // epoll_pwait
    #else
    static let epollWaits: Set<Int> = []
    #endif
    static let ioUringEnter = 426

    /// The stall of many-route runs (19–28 k deliveries/s, p90 8–10 ms): the old reader let the loop sleep in
    /// epoll_wait after a ring wait that ended empty, and only an eventfd that the kernel writes 10–30 ms after the
    /// data (with DEFER_TASKRUN) woke it. Not a timed test: it counts what /proc says the loop thread is blocked in
    /// while a closed-loop exchange runs through the ring (against the old reader: in epoll_wait in 1,818 of 1,873
    /// samples; now: in io_uring_enter, never in epoll_wait).
    @Test(
        "in a closed-loop exchange the loop sleeps in the ring, never in epoll_wait, which data arriving in the ring wakes only 10-30 ms late",
        .enabled(if: BenchUringReader.unavailableReason() == nil, "io_uring is available on this kernel")
    )
    func closedLoopSleepsInTheRing() throws {
        let rounds = 40
        let loops = try BenchLoops(threads: 1)
        defer { loops.shutdown() }
        let listener = try Socket.listen(host: "127.0.0.1", port: 0)
        defer { Socket.close(listener) }
        let address = try SocketAddress(ipAddress: "127.0.0.1", port: try Socket.localPort(listener))
        let connected = loops.collect { _ -> CInt in (try? Socket.connect(to: address).fd) ?? -1 }
        let client = try #require(connected.first)
        try #require(client >= 0)
        defer { Socket.close(client) }
        var accepted: CInt?
        let acceptDeadline = MonotonicClock.nanoseconds() + 5_000_000_000
        while accepted == nil && MonotonicClock.nanoseconds() < acceptDeadline {
            if let peer = try Socket.accept(listener) { accepted = peer } else { usleep(1_000) }
        }
        let peer = try #require(accepted)
        defer {
            _ = shutdown(peer, CInt(SHUT_RDWR))  // ends the echo thread's read if the exchange stopped early
            Socket.close(peer)
        }
        try Socket.setNonBlocking(peer, false)

        // The peer answers each byte a few milliseconds later, longer than a sleep in the ring lasts when nothing
        // comes: between answers the loop has nothing to do, the moment the old reader left it in epoll_wait.
        let echoed = Flag()
        DispatchQueue.global().async {
            var byte: UInt8 = 0
            for _ in 0..<rounds {
                guard Glibc.read(peer, &byte, 1) == 1 else { break }
                usleep(3_000)
                guard Glibc.write(peer, &byte, 1) == 1 else { break }
            }
            echoed.set()
        }
        let started = loops.collect { context -> String? in
            guard let reader = BenchUringReader.of(context) else { return nil }
            let pinger = Pinger(fd: client, rounds: rounds)
            context.attach(pinger)
            _ = reader.attach(fd: client, reader: pinger)
            pinger.sendNext()
            return Self.currentThreadID() ?? "unknown"
        }
        let loopThread = try #require(started.first ?? nil)

        // While the exchange runs, look at what the loop thread is blocked in.
        var samples = 0
        var inEpoll = 0
        var inRing = 0
        let deadline = MonotonicClock.nanoseconds() + 20_000_000_000
        while !echoed.isSet && MonotonicClock.nanoseconds() < deadline {
            if let call = Self.blockedCall(tid: loopThread) {
                samples += 1
                if let number = Int(call[0]) {
                    if Self.epollWaits.contains(number) && call.count > 4 && call[4] != "0x0" { inEpoll += 1 }
                    if number == Self.ioUringEnter { inRing += 1 }
                }
            }
            usleep(200)
        }
        var progress: (received: Int, mismatches: Int, endError: String?) = (0, 0, nil)
        while MonotonicClock.nanoseconds() < deadline {
            progress = loops.collect { context in
                let pinger = context.attachment(Pinger.self)
                return (pinger?.received ?? -1, pinger?.mismatches ?? -1, pinger?.endError)
            }.first ?? (0, 0, nil)
            if progress.received >= rounds || progress.endError != nil { break }
            usleep(1_000)
        }
        _ = loops.collect { context in context.detach(Pinger.self) }
        #expect(progress.received == rounds, "every answer came back through the ring")
        #expect(progress.mismatches == 0)
        #expect(progress.endError == nil)
        // No sample (an unreadable /proc) would make the check below pass without looking.
        #expect(samples > 0, "/proc/self/task/\(loopThread)/syscall could not be read")
        #expect(
            inEpoll == 0,
            "the loop slept in epoll_wait in \(inEpoll) of \(samples) samples (in the ring in \(inRing)) while a socket was read through the ring"
        )
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
