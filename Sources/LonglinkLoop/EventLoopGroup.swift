import Glibc
import Synchronization

/// N event loops, each running on its own pthread (default: one per core).
///
/// `next()` hands out loops round-robin, e.g. for outgoing client connections. A server usually puts one
/// `SO_REUSEPORT` listener on every loop instead (see `Socket`). `shutdownGracefully()` stops every loop (jobs
/// already queued still run) and joins the threads.
public final class EventLoopGroup: Sendable {
    /// The loops, `loops[i].id == i`.
    public let loops: [EventLoop]
    private let cursor = Atomic<Int>(0)
    /// The threads still to join; emptied by the first `shutdownGracefully()`.
    private let threads: Mutex<[pthread_t]>

    /// The number of online CPUs.
    public static var coreCount: Int { Swift.max(1, sysconf(CInt(_SC_NPROCESSORS_ONLN))) }

    /// Starts `numberOfThreads` loops, each on a new thread named `longlink-loop-<id>`, sleeping in `backend`.
    /// Each loop runs `setup` on its own thread before its first iteration (register listeners, signal sources,
    /// timers).
    public init(
        numberOfThreads: Int = EventLoopGroup.coreCount,
        backend: SelectorBackend = .platformDefault,
        setup: @escaping @Sendable (LoopContext) -> Void = { _ in }
    ) throws(IOError) {
        precondition(numberOfThreads > 0, "an EventLoopGroup needs at least one loop")
        var loops: [EventLoop] = []
        for id in 0..<numberOfThreads { loops.append(try EventLoop(id: id, backend: backend)) }
        self.loops = loops
        var started: [pthread_t] = []
        for loop in loops {
            loop.execute(setup)  // queued before the thread starts: it is the loop's first job
            let argument = Unmanaged.passRetained(loop).toOpaque()
            var thread = pthread_t()
            let result = pthread_create(&thread, nil, loopThreadMain, argument)
            guard result == 0 else {
                Unmanaged<EventLoop>.fromOpaque(argument).release()
                for running in loops { running.stop() }
                for running in started { pthread_join(running, nil) }
                throw IOError(errno: result, function: "pthread_create")
            }
            started.append(thread)
        }
        self.threads = Mutex(started)
    }

    /// The next loop, round-robin.
    public func next() -> EventLoop {
        loops[cursor.wrappingAdd(1, ordering: .relaxed).oldValue % loops.count]
    }

    /// Stops every loop and waits for its thread to exit. Must not be called from one of the group's loops
    /// (it would wait for itself). Calling it again does nothing.
    public func shutdownGracefully() {
        precondition(!loops.contains { $0.inEventLoop }, "shutdownGracefully() called on one of the group's loops")
        for loop in loops { loop.stop() }
        let joinable = threads.withLock { threads -> [pthread_t] in
            defer { threads = [] }
            return threads
        }
        for thread in joinable { pthread_join(thread, nil) }
    }
}

/// The body of every loop thread: a global `@convention(c)` function, as pthread_create requires.
/// `argument` is a retained `EventLoop`.
private func loopThreadMain(_ argument: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    let loop = Unmanaged<EventLoop>.fromOpaque(argument!).takeRetainedValue()
    nameCurrentThread("longlink-loop-\(loop.id)")
    do {
        try loop.run()
    } catch {
        // Only the selector failing (epoll_wait, epoll_create, poll) ends up here (ENOMEM and the like): the loop is
        // gone and its inbox refuses new jobs, so callers see `execute` return false rather than a hang.
        var message = "longlink: \(loop) stopped: \(error)\n"
        message.withUTF8 { _ = Glibc.write(2, $0.baseAddress, $0.count) }
    }
    return nil
}
