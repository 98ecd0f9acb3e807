import Glibc
import LonglinkLoop
import LonglinkTestSupport
import Synchronization
import Testing

@Suite("EventLoop (on each selector backend)", .ownThreads)
struct EventLoopTests {
    @Test("execute from many threads runs every job exactly once, on the loop", arguments: SelectorBackend.allCases)
    func executeFromManyThreads(backend: SelectorBackend) throws {
        let group = try EventLoopGroup(numberOfThreads: 1, backend: backend)
        defer { group.shutdownGracefully() }
        let loop = group.loops[0]
        let threads = 8
        let jobsPerThread = 2_000
        let counts = Shared([Int](repeating: 0, count: threads * jobsPerThread))
        let offLoop = Shared(0)

        let posters = (0..<threads).map { thread in
            spawnThread {
                for job in 0..<jobsPerThread {
                    let index = thread * jobsPerThread + job
                    loop.execute { context in
                        if !context.eventLoop.inEventLoop { offLoop.update { $0 += 1 } }
                        counts.update { $0[index] += 1 }
                    }
                }
            }
        }
        for poster in posters { pthread_join(poster, nil) }

        #expect(eventually { counts.value.reduce(0, +) == threads * jobsPerThread })
        #expect(counts.value.allSatisfy { $0 == 1 })
        #expect(offLoop.value == 0)
        #expect(loop.wakeupCount <= threads * jobsPerThread)
    }

    @Test("jobs posted while the loop is busy share one eventfd wake-up", arguments: SelectorBackend.allCases)
    func wakeupsAreMerged(backend: SelectorBackend) throws {
        let group = try EventLoopGroup(numberOfThreads: 1, backend: backend)
        defer { group.shutdownGracefully() }
        let loop = group.loops[0]
        let busy = Shared(false)
        let release = Shared(false)
        let ran = Shared(0)

        // Occupy the loop inside a job: the inbox was just drained, so no wake-up is pending.
        loop.execute { _ in
            busy.update { $0 = true }
            _ = eventually { release.value }
        }
        #expect(eventually { busy.value })
        let before = loop.wakeupCount

        let posters = (0..<4).map { _ in
            spawnThread {
                for _ in 0..<500 { loop.execute { _ in ran.update { $0 += 1 } } }
            }
        }
        for poster in posters { pthread_join(poster, nil) }
        #expect(loop.wakeupCount == before + 1)  // 2,000 jobs, one eventfd write
        release.update { $0 = true }

        #expect(eventually { ran.value == 2_000 })
    }

    @Test("a job the loop posts to itself writes no eventfd, and a chain of such jobs never stalls the loop", arguments: SelectorBackend.allCases)
    func ownThreadPostsDoNotWake(backend: SelectorBackend) throws {
        let group = try EventLoopGroup(numberOfThreads: 1, backend: backend)
        defer { group.shutdownGracefully() }
        let loop = group.loops[0]
        let ran = Shared(0)
        let started = Shared(false)
        loop.execute { _ in started.update { $0 = true } }
        #expect(eventually { started.value })
        // Give the loop time to go to sleep in epoll_wait: every wake-up from here on is counted.
        usleep(20_000)
        let before = loop.wakeupCount

        // One job from outside (one eventfd write); it posts the next from the loop thread, 1,000 times over.
        // Each self-posted job must run without an eventfd write: the loop polls instead of sleeping.
        @Sendable func chain(_ left: Int, _ context: LoopContext) {
            ran.update { $0 += 1 }
            guard left > 0 else { return }
            context.eventLoop.execute { context in chain(left - 1, context) }
        }
        loop.execute { context in chain(999, context) }
        #expect(eventually { ran.value == 1_000 })
        #expect(loop.wakeupCount == before + 1)
    }

    @Test("timers fire in deadline order and a cancelled timer never fires", arguments: SelectorBackend.allCases)
    func timersInDeadlineOrder(backend: SelectorBackend) throws {
        let group = try EventLoopGroup(numberOfThreads: 1, backend: backend)
        defer { group.shutdownGracefully() }
        let fired = Shared<[Int]>([])
        let cancelResult = Shared<Bool?>(nil)

        group.loops[0].execute { context in
            var ids: [Int: TimerID] = [:]
            for millis in [50, 10, 40, 20, 30, 0] {
                ids[millis] = context.schedule(after: .milliseconds(millis)) { fired.update { $0.append(millis) } }
            }
            let cancelled = context.cancel(ids[40]!)
            cancelResult.update { $0 = cancelled }
        }

        #expect(eventually { fired.value.count == 5 })
        #expect(fired.value == [0, 10, 20, 30, 50])
        #expect(cancelResult.value == true)
    }

    @Test("a repeating timer fires until it cancels itself, and cancelling twice reports false", arguments: SelectorBackend.allCases)
    func repeatingTimer(backend: SelectorBackend) throws {
        let group = try EventLoopGroup(numberOfThreads: 1, backend: backend)
        defer { group.shutdownGracefully() }
        let ticks = Shared(0)
        let done = Shared<(Bool, Int)?>(nil)

        group.loops[0].execute { context in
            var timer: TimerID?
            timer = context.schedule(every: .milliseconds(1)) {
                ticks.update { $0 += 1 }
                if ticks.value == 5 {
                    let first = context.cancel(timer!)
                    let second = context.cancel(timer!)
                    // A later timer proves no tick arrives after the cancel.
                    context.schedule(after: .milliseconds(20)) {
                        done.update { $0 = (first && !second, context.scheduledTimerCount) }
                    }
                }
            }
        }

        #expect(eventually { done.value != nil })
        #expect(ticks.value == 5)
        #expect(done.value?.0 == true)
        #expect(done.value?.1 == 0)
    }

    @Test("an event for an fd closed and reused in the same batch is dropped", arguments: SelectorBackend.allCases)
    func staleEventIsDropped(backend: SelectorBackend) throws {
        let group = try EventLoopGroup(numberOfThreads: 1, backend: backend)
        defer { group.shutdownGracefully() }
        // (handlers called, new registration called, same fd number, dropped events, distinct registration IDs)
        let result = Shared<(Int, Int, Bool, Int, Bool)?>(nil)

        group.loops[0].execute { context in
            final class Scenario {
                var first: (read: CInt, write: CInt) = (-1, -1)
                var second: (read: CInt, write: CInt) = (-1, -1)
                var registrations: [CInt: RegistrationID] = [:]
                var calls = 0
                var newCalls = 0
                var swapped: RegistrationID?
                var replacement: RegistrationID?
            }
            let scenario = Scenario()
            let droppedBefore = context.droppedEventCount
            func makePipe() -> (CInt, CInt) {
                var fds: [CInt] = [-1, -1]
                precondition(pipe(&fds) == 0)
                return (fds[0], fds[1])
            }
            scenario.first = makePipe()
            scenario.second = makePipe()
            var byte: UInt8 = 1
            _ = write(scenario.first.write, &byte, 1)
            _ = write(scenario.second.write, &byte, 1)

            // Whichever handler runs first closes the other fd, puts a fresh (empty) pipe on the same number with
            // dup2 (atomically: no other thread can grab the number), and registers it anew. The other fd's event
            // is already in this epoll_wait batch and must be dropped, not delivered to anyone.
            for (mine, other) in [(scenario.first.read, scenario.second.read), (scenario.second.read, scenario.first.read)] {
                scenario.registrations[mine] = try! context.register(fd: mine, interest: .read) { _ in
                    scenario.calls += 1
                    context.deregister(scenario.registrations[mine]!)
                    guard scenario.swapped == nil else { return }
                    let old = scenario.registrations[other]!
                    scenario.swapped = old
                    context.deregister(old)
                    let fresh = makePipe()
                    precondition(dup2(fresh.0, other) == other)
                    close(fresh.0)
                    close(fresh.1)
                    scenario.replacement = try! context.register(fd: other, interest: .read) { _ in
                        scenario.newCalls += 1
                    }
                    // Runs after the rest of this batch has been dispatched.
                    context.enqueue {
                        result.update {
                            $0 = (
                                scenario.calls, scenario.newCalls, scenario.replacement?.fd == old.fd,
                                context.droppedEventCount - droppedBefore, scenario.replacement != old
                            )
                        }
                        context.deregister(scenario.replacement!)
                        for fd in [scenario.first.read, scenario.first.write, scenario.second.read, scenario.second.write] {
                            close(fd)
                        }
                    }
                }
            }
        }

        #expect(eventually { result.value != nil })
        let outcome = try #require(result.value)
        #expect(outcome.0 == 1)  // only the first handler ran
        #expect(outcome.1 == 0)  // the new registration never saw the old event
        #expect(outcome.2)
        #expect(outcome.3 == 1)  // exactly one event dropped as stale
        #expect(outcome.4)
    }

    @Test("a loop runs on the calling thread until stopped, then refuses jobs", arguments: SelectorBackend.allCases)
    func runOnCallingThread(backend: SelectorBackend) throws {
        let loop = try EventLoop(backend: backend)
        let ranJob = Shared(false)
        loop.execute { context in
            ranJob.update { $0 = context.eventLoop.inEventLoop }
        }
        try loop.run { context in
            #expect(context.eventLoop.inEventLoop)
            context.schedule(after: .milliseconds(5)) { context.stop() }
        }
        #expect(ranJob.value)
        #expect(!loop.inEventLoop)
        #expect(loop.execute { _ in } == false)
    }

    @Test("interest changes through reregister and errors reach the normal read path", arguments: SelectorBackend.allCases)
    func interestAndHangup(backend: SelectorBackend) throws {
        let group = try EventLoopGroup(numberOfThreads: 1, backend: backend)
        defer { group.shutdownGracefully() }
        let seen = Shared<[SelectorEvent]>([])
        let interests = Shared<[SelectorEvent?]>([])
        let (client, server) = try loopbackPair()

        group.loops[0].execute { context in
            var id: RegistrationID?
            id = try! context.register(fd: server, interest: .write) { event in
                seen.update { $0.append(event) }
                if event.contains(.write) {
                    try! context.reregister(id!, interest: .read)
                    interests.update { $0.append(context.interest(of: id!)) }
                    close(client)  // the peer goes away: .read (EOF) must fire
                } else {
                    context.deregister(id!)
                    interests.update { $0.append(context.interest(of: id!)) }
                    close(server)
                }
            }
        }

        #expect(eventually { seen.value.count == 2 })
        #expect(seen.value.first == .write)
        #expect(seen.value.last?.contains(.read) == true)
        #expect(interests.value == [.read, nil])
    }
}
