import Glibc
import LonglinkLoop
import LonglinkTestSupport
import Synchronization
import Testing

@Suite("LoopBound", .ownThreads)
struct LoopBoundTests {
    /// A loop-confined object: not `Sendable`, touched only on its loop.
    final class Counter {
        var count = 0
    }

    /// What the jobs saw, in the order they ran: nil when `object` was nil, else the count after the increment.
    typealias Seen = Shared<[Int?]>

    private static func bump(_ handle: LoopBound<Counter>, into seen: Seen) -> @Sendable (LoopContext) -> Void {
        { _ in
            let counter = handle.object
            counter?.count += 1
            seen.update { $0.append(counter?.count) }
        }
    }

    @Test("a handle made off the loop is nil until bound there, then reaches the object until the loop finishes")
    func boundLater() throws {
        let group = try EventLoopGroup(numberOfThreads: 2)
        var stopped = false
        defer { if !stopped { group.shutdownGracefully() } }
        let loop = group.loops[1]
        // Made on the test thread, before the object exists (as a Redis broker makes its session's handle).
        let handle = LoopBound<Counter>(loop: loop)
        #expect(handle.loop === loop)
        let seen = Seen([])

        // Posted before the binding job: runs first (the inbox is FIFO) and finds nothing.
        #expect(loop.execute(Self.bump(handle, into: seen)))
        let bindingPosted = loop.execute { context in handle.bind(Counter(), on: context) }
        #expect(bindingPosted)
        // Posted after it: every one finds the object, in order.
        for _ in 0..<3 { #expect(loop.execute(Self.bump(handle, into: seen))) }
        #expect(eventually { seen.value.count == 4 })
        #expect(seen.value == [nil, 1, 2, 3])

        // From another thread, through a third party: a job hops to the handle's loop first.
        let fromOtherLoop = Shared<Bool>(false)
        group.loops[0].execute { _ in
            #expect(!handle.loop.inEventLoop)
            handle.loop.execute { _ in fromOtherLoop.update { $0 = handle.object?.count == 3 } }
        }
        #expect(eventually { fromOtherLoop.value })

        // Once the loop finished (its last jobs ran), the handle let go of the object: a finish hook added after
        // the binding runs after the handle's own and finds nil. The loop then refuses new jobs.
        let released = Shared<Bool?>(nil)
        loop.execute { context in
            context.whenFinished { released.update { $0 = handle.object == nil } }
        }
        group.shutdownGracefully()
        stopped = true
        #expect(released.value == true)
        #expect(!loop.execute(Self.bump(handle, into: seen)))
        #expect(seen.value == [nil, 1, 2, 3])
    }

    @Test("unbind lets go of the object early: later jobs find nil, as after the loop finished")
    func unbindEarly() throws {
        let group = try EventLoopGroup(numberOfThreads: 1)
        defer { group.shutdownGracefully() }
        let loop = group.loops[0]
        let handle = LoopBound<Counter>(loop: loop)
        let seen = Seen([])
        loop.execute { context in handle.bind(Counter(), on: context) }
        loop.execute(Self.bump(handle, into: seen))
        loop.execute { _ in handle.unbind() }
        loop.execute(Self.bump(handle, into: seen))
        #expect(eventually { seen.value.count == 2 })
        #expect(seen.value == [1, nil])
    }

    @Test("execute runs a job with the bound object on its loop, and skips it before the binding and after unbind")
    func executeWithObject() throws {
        let group = try EventLoopGroup(numberOfThreads: 1)
        defer { group.shutdownGracefully() }
        let loop = group.loops[0]
        let handle = LoopBound<Counter>(loop: loop)
        let ran = Shared<[Int]>([])
        // Jobs that run without an object leave no trace; one posted after them marks the end.
        let record: @Sendable (Counter) -> Void = { counter in
            #expect(loop.inEventLoop)
            counter.count += 1
            ran.update { $0.append(counter.count) }
        }
        #expect(handle.execute(record))
        loop.execute { context in handle.bind(Counter(), on: context) }
        #expect(handle.execute(record))
        #expect(handle.execute(record))
        loop.execute { _ in handle.unbind() }
        #expect(handle.execute(record))
        let done = Shared<Bool>(false)
        loop.execute { _ in done.update { $0 = true } }
        #expect(eventually { done.value })
        #expect(ran.value == [1, 2])
    }

    @Test("a handle made on the loop reaches its object at once and drops it when the loop finishes")
    func boundOnTheLoop() throws {
        let loop = try EventLoop()
        let seen = Seen([])
        let handleBox = Shared<LoopBound<Counter>?>(nil)
        let released = Shared<Bool>(false)
        let thread = spawnThread {
            do {
                try loop.run { context in
                    let handle = LoopBound(Counter(), on: context)
                    handleBox.update { $0 = handle }
                    context.whenFinished { released.update { $0 = handle.object == nil } }
                }
            } catch {
                Issue.record("the loop failed: \(error)")
            }
        }
        #expect(eventually { handleBox.value != nil })
        let handle = try #require(handleBox.value)
        #expect(loop.execute(Self.bump(handle, into: seen)))
        #expect(eventually { seen.value == [1] })
        loop.stop()
        pthread_join(thread, nil)
        #expect(released.value)
        #expect(!loop.execute(Self.bump(handle, into: seen)))
    }
}
