import Glibc
import LonglinkCore
import LonglinkLoop
import LonglinkTestSupport
import Testing

/// The selector seam's contract, run against every backend (epoll and poll) through the loop's public API: what a
/// handler can rely on whichever backend the loop sleeps in. Each test runs one loop on its own thread.
@Suite("Selector contract (epoll and poll)", .ownThreads)
struct SelectorContractTests {
    /// A loop-confined holder for a registration, so a handler can deregister itself.
    private final class Slot {
        var id: RegistrationID?
    }

    @Test("read interest fires only once data arrives, and again while it is left unread (level-triggered)", arguments: SelectorBackend.allCases)
    func readReadiness(backend: SelectorBackend) throws {
        let (client, server) = try loopbackPair()
        defer { Socket.close(client) }
        defer { Socket.close(server) }
        let group = try EventLoopGroup(numberOfThreads: 1, backend: backend)
        defer { group.shutdownGracefully() }
        let events = Shared<[SelectorEvent]>([])
        let read = Shared(0)

        group.loops[0].execute { context in
            _ = try! context.register(fd: server, interest: .read) { event in
                events.update { $0.append(event) }
                // Leave the byte in the socket twice: level-triggered readiness must report it again.
                guard events.value.count >= 3 else { return }
                var buffer = [UInt8](repeating: 0, count: 16)
                if case .processed(let count)? = buffer.withUnsafeMutableBytes({ try? Socket.read(server, into: $0) }) {
                    read.update { $0 += count }
                }
            }
        }
        usleep(30_000)
        #expect(events.value.isEmpty)  // nothing to read yet

        var byte: UInt8 = 7
        #expect(Glibc.write(client, &byte, 1) == 1)
        #expect(eventually { read.value == 1 })
        usleep(30_000)
        #expect(events.value.count == 3)  // read once consumed: no more events
        #expect(events.value.allSatisfy { $0 == .read })
    }

    @Test("write interest fires on a socket with room, and stops once the interest is dropped", arguments: SelectorBackend.allCases)
    func writeReadinessAndModify(backend: SelectorBackend) throws {
        let (client, server) = try loopbackPair()
        defer { Socket.close(client) }
        defer { Socket.close(server) }
        let group = try EventLoopGroup(numberOfThreads: 1, backend: backend)
        defer { group.shutdownGracefully() }
        let events = Shared<[SelectorEvent]>([])

        group.loops[0].execute { context in
            let slot = Slot()
            slot.id = try! context.register(fd: client, interest: [.read, .write]) { event in
                events.update { $0.append(event) }
                try! context.reregister(slot.id!, interest: .read)  // keep only read: nothing more to report
            }
        }
        #expect(eventually { !events.value.isEmpty })
        usleep(30_000)
        #expect(events.value == [.write])
    }

    @Test("a modified interest is what fires: none silences an fd, read brings its data back, remove ends it", arguments: SelectorBackend.allCases)
    func modifyAndRemove(backend: SelectorBackend) throws {
        let (client, server) = try loopbackPair()
        defer { Socket.close(client) }
        defer { Socket.close(server) }
        let group = try EventLoopGroup(numberOfThreads: 1, backend: backend)
        defer { group.shutdownGracefully() }
        let loop = group.loops[0]
        let events = Shared<[SelectorEvent]>([])
        let registered = Shared<RegistrationID?>(nil)
        let counts = Shared<[Int]>([])

        loop.execute { context in
            let id = try! context.register(fd: server, interest: .read) { event in events.update { $0.append(event) } }
            try! context.reregister(id, interest: .none)
            registered.update { $0 = id }
        }
        #expect(eventually { registered.value != nil })
        var byte: UInt8 = 1
        #expect(Glibc.write(client, &byte, 1) == 1)
        usleep(30_000)
        #expect(events.value.isEmpty)  // data waits, but nobody asked for .read

        let id = try #require(registered.value)
        loop.execute { context in try! context.reregister(id, interest: .read) }
        #expect(eventually { !events.value.isEmpty })
        #expect(events.value.first == .read)

        loop.execute { context in
            context.deregister(id)
            events.update { $0.removeAll() }
            counts.update { $0 = [context.registrationCount, context.interest(of: id) == nil ? 0 : 1] }
        }
        #expect(eventually { !counts.value.isEmpty })
        usleep(30_000)
        #expect(events.value.isEmpty)  // the unread byte no longer reaches anyone
        #expect(counts.value == [0, 0])
    }

    @Test("a peer's orderly close fires read, and the read returns end of file", arguments: SelectorBackend.allCases)
    func endOfFile(backend: SelectorBackend) throws {
        let (client, server) = try loopbackPair()
        defer { Socket.close(server) }
        let group = try EventLoopGroup(numberOfThreads: 1, backend: backend)
        defer { group.shutdownGracefully() }
        let reads = Shared<[Int]>([])

        group.loops[0].execute { context in
            let slot = Slot()
            slot.id = try! context.register(fd: server, interest: .read) { event in
                guard event.contains(.read) else { return }
                var buffer = [UInt8](repeating: 0, count: 16)
                if case .processed(let count)? = buffer.withUnsafeMutableBytes({ try? Socket.read(server, into: $0) }) {
                    reads.update { $0.append(count) }
                    if count == 0 { context.deregister(slot.id!) }
                }
            }
        }
        var bytes: [UInt8] = [1, 2, 3]
        #expect(Glibc.write(client, &bytes, 3) == 3)
        Socket.close(client)
        #expect(eventually { reads.value.last == 0 })
        #expect(reads.value.reduce(0, +) == 3)
    }

    @Test("a reset peer is reported even with no interest, and with read interest it reaches the read path", arguments: SelectorBackend.allCases)
    func hangUp(backend: SelectorBackend) throws {
        let group = try EventLoopGroup(numberOfThreads: 1, backend: backend)
        defer { group.shutdownGracefully() }
        for interest in [SelectorEvent.none, .read] {
            let (client, server) = try loopbackPair()
            defer { Socket.close(server) }
            let events = Shared<[SelectorEvent]>([])
            let registered = Shared(false)
            group.loops[0].execute { context in
                let slot = Slot()
                slot.id = try! context.register(fd: server, interest: interest) { event in
                    events.update { $0.append(event) }
                    context.deregister(slot.id!)  // errors and hang-ups are level-triggered too
                }
                registered.update { $0 = true }
            }
            #expect(eventually { registered.value })
            // SO_LINGER with a zero timeout: close sends RST instead of FIN.
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            _ = setsockopt(client, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
            Socket.close(client)
            #expect(eventually { !events.value.isEmpty })
            let event = try #require(events.value.first)
            #expect(!event.isDisjoint(with: [.reset, .error]), "\(backend): \(event)")
            #expect(event.contains(.read) == (interest == .read), "\(backend): \(event)")
        }
    }

    @Test("a socket closed in both directions reports hang-up (reset), also with no interest, and no error", arguments: SelectorBackend.allCases)
    func hangUpWithoutError(backend: SelectorBackend) throws {
        let (client, server) = try loopbackPair()
        defer { Socket.close(server) }
        let group = try EventLoopGroup(numberOfThreads: 1, backend: backend)
        defer { group.shutdownGracefully() }
        let events = Shared<[SelectorEvent]>([])
        let registered = Shared(false)
        group.loops[0].execute { context in
            let slot = Slot()
            slot.id = try! context.register(fd: server, interest: .none) { event in
                events.update { $0.append(event) }
                context.deregister(slot.id!)
            }
            registered.update { $0 = true }
        }
        #expect(eventually { registered.value })
        // Our side stops sending, the peer closes in order (FIN, no RST): both directions are shut, nothing failed.
        try Socket.shutdownWrite(server)
        Socket.close(client)
        #expect(eventually { !events.value.isEmpty })
        let event = try #require(events.value.first)
        #expect(event.contains(.reset), "\(backend): \(event)")
        #expect(!event.contains(.error), "\(backend): \(event)")
    }

    @Test("another thread wakes the sleeping loop, every time, with one wake-up per job", arguments: SelectorBackend.allCases)
    func wakeUpFromAnotherThread(backend: SelectorBackend) throws {
        let group = try EventLoopGroup(numberOfThreads: 1, backend: backend)
        defer { group.shutdownGracefully() }
        let loop = group.loops[0]
        let ran = Shared(0)
        loop.execute { _ in ran.update { $0 += 1 } }
        #expect(eventually { ran.value == 1 })

        for round in 2...21 {
            usleep(2_000)  // let the loop go back to sleep with nothing to do (no timers, no ready fd)
            let before = loop.wakeupCount
            let poster = spawnThread { loop.execute { _ in ran.update { $0 += 1 } } }
            pthread_join(poster, nil)
            #expect(eventually { ran.value == round }, "\(backend): round \(round)")
            #expect(loop.wakeupCount == before + 1)
        }
    }

    @Test("timers wake an idle loop, never before their deadline, one-shot and repeating", arguments: SelectorBackend.allCases)
    func timersWakeAnIdleLoop(backend: SelectorBackend) throws {
        let group = try EventLoopGroup(numberOfThreads: 1, backend: backend)
        defer { group.shutdownGracefully() }
        let oneShot = Shared<UInt64?>(nil)
        let ticks = Shared<[UInt64]>([])

        group.loops[0].execute { context in
            let scheduled = MonotonicClock.nanoseconds()
            context.schedule(after: .milliseconds(40)) { oneShot.update { $0 = MonotonicClock.nanoseconds() - scheduled } }
            var timer: TimerID?
            timer = context.schedule(every: .milliseconds(5)) {
                ticks.update { $0.append(MonotonicClock.nanoseconds() - scheduled) }
                if ticks.value.count == 5 { context.cancel(timer!) }
            }
        }
        #expect(eventually { oneShot.value != nil && ticks.value.count == 5 })
        #expect(try #require(oneShot.value) >= 40_000_000)
        for (index, elapsed) in ticks.value.enumerated() {
            #expect(elapsed >= UInt64(index + 1) * 5_000_000, "\(backend): tick \(index) after \(elapsed) ns")
        }
        usleep(20_000)
        #expect(ticks.value.count == 5)
    }
}
