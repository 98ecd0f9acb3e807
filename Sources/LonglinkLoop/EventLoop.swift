import Glibc
import Synchronization

/// The thread-safe handle of one event loop: hand it work from any thread with `execute(_:)`.
///
/// An event loop is one thread running an `aeProcessEvents`-shaped iteration forever (see `LoopContext.runOnce`):
///
///     while !stopped {
///         run beforeSleep hooks            // flush queued writes directly
///         epoll_wait(timeout: ∞)           // timers wake us through the timerfd, other threads through the eventfd
///                                          // (poll backend: poll(timeout: next timer), a self-pipe)
///         dispatch ready fds               // a handler reads, then writes
///         run expired timers               // in deadline order
///         drain the inbox                  // jobs from other threads
///     }
///
/// Everything the loop owns (selector, registrations, timers, connections) lives in its `LoopContext`, which is
/// created on the loop thread and is not `Sendable`, so the compiler keeps it there. This handle holds only the
/// inbox (a `Mutex`-protected job array and an eventfd) and atomics.
public final class EventLoop: Sendable, CustomStringConvertible {
    /// The loop's index in its group (0 for a standalone loop); used in thread names and logs.
    public let id: Int
    /// What the loop sleeps in: epoll (eventfd, timerfd) or poll (self-pipe, poll timeout).
    public let backend: SelectorBackend
    let inbox: Inbox
    /// `pthread_self()` of the thread inside `run`, 0 when no thread runs the loop.
    private let thread = Atomic<UInt>(0)
    private let started = Atomic<Bool>(false)

    /// Creates a loop that does nothing until some thread calls `run`, sleeping in `backend`.
    public init(id: Int = 0, backend: SelectorBackend = .platformDefault) throws(IOError) {
        self.id = id
        self.backend = backend
        self.inbox = try Inbox(backend: backend)
    }

    public var description: String { "EventLoop(\(id))" }

    /// True when called from the thread currently running this loop.
    public var inEventLoop: Bool {
        let current = thread.load(ordering: .acquiring)
        return current != 0 && pthread_equal(current, pthread_self()) != 0
    }

    /// Runs `job` on the loop thread, after the current iteration's I/O and timers. Callable from any thread,
    /// including the loop itself (the job then runs in the next iteration, with no eventfd write: the loop polls
    /// instead of sleeping while jobs wait). Returns false, dropping the job, once the
    /// loop has shut down.
    @discardableResult
    public func execute(_ job: @escaping @Sendable (LoopContext) -> Void) -> Bool {
        inEventLoop ? inbox.postFromLoop(job) : inbox.post(job)
    }

    /// Asks the loop to stop after the current iteration; jobs already queued still run. Callable from any thread.
    public func stop() {
        execute { $0.stop() }
    }

    /// How many times other threads had to write the wake-up eventfd (merged: many jobs, few wake-ups).
    public var wakeupCount: Int { inbox.wakeupCount }

    /// Runs the loop on the calling thread until `stop()`. `setup` runs first, on this thread, with the loop's
    /// context (register listeners, schedule timers). `EventLoopGroup` calls this on its own threads; CLI tools and
    /// tests may call it directly. A loop runs at most once. Throws only if epoll itself fails.
    public func run(_ setup: (LoopContext) -> Void = { _ in }) throws(IOError) {
        let (exchanged, _) = started.compareExchange(expected: false, desired: true, ordering: .relaxed)
        precondition(exchanged, "\(self) is already running or has run")
        thread.store(pthread_self(), ordering: .releasing)
        defer { thread.store(0, ordering: .releasing) }
        let context: LoopContext
        do {
            context = try LoopContext(eventLoop: self)
        } catch {
            var dropped: [@Sendable (LoopContext) -> Void] = []
            inbox.close(into: &dropped)  // no context to run them with; later `execute` calls return false
            throw error
        }
        defer { context.finish() }
        setup(context)
        while !context.isStopped {
            try context.runOnce()
        }
    }
}
