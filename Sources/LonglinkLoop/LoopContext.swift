import LonglinkCore
import Glibc

/// Something that reacts to readiness of one registered fd. Loop-confined: a connection, a listener, a signal
/// source. Handle `.read` before `.write` (Redis's order): a reply produced by the read then goes out in the write.
public protocol SelectorHandler: AnyObject {
    /// Called on the loop thread with what fired (never empty). Errors and hang-ups also carry the registration's
    /// `.read`/`.write` interest, so the normal read or write path discovers them.
    func handleEvent(_ event: SelectorEvent)
}

/// Identifies one registration of an fd on one loop. A new registration of the same fd number gets a new ID, so a
/// stale ID cannot touch it.
public struct RegistrationID: Hashable, Sendable, CustomStringConvertible {
    /// The registered file descriptor.
    public let fd: CInt
    /// Never 0, so a holder may store 0 for "not registered" (a `Connection` keeps the generation alone and takes
    /// the fd from its transport).
    public let generation: UInt32

    /// The ID of registration `generation` of `fd`, as `register` returned it.
    public init(fd: CInt, generation: UInt32) {
        self.fd = fd
        self.generation = generation
    }

    public var description: String { "fd \(fd)#\(generation)" }
}

/// The loop-thread side of an event loop: its selector, fd-indexed registrations, timers and hooks.
///
/// Created by `EventLoop.run` on the loop thread and handed to setup code and `execute` jobs. It is deliberately not
/// `Sendable`, so it (and the connections holding it) cannot leak to another thread; every method also asserts it
/// runs on the loop thread in debug builds. Registrations live in an array indexed by fd, preallocated to the
/// process's open-file limit (Redis's `events[setsize]`): O(1) lookup per event and no hashing.
public final class LoopContext {
    private struct Registration {
        var generation: UInt32
        var interest: SelectorEvent
        var handler: any SelectorHandler
    }

    /// The thread-safe handle of this loop (give it to other threads to post work here).
    public let eventLoop: EventLoop
    let selector: Selector
    /// The epoll loop's timerfd; nil on the poll loop, whose timers ride on the poll timeout.
    let timerFD: TimerFD?
    private var registrations: [Registration?]
    /// One past the highest fd ever registered: housekeeping walks the slots below it, not all of them.
    private var registeredFDLimit = 0
    private var nextGeneration: UInt32 = 1
    var timers = TimerHeap()
    /// The deadline the timerfd is armed for, nil when it is disarmed or has fired.
    var armedDeadline: UInt64?
    var beforeSleepHooks: [() -> Void] = []
    /// Told the busy time of every iteration (see `addIterationObserver`).
    var iterationObservers: [(UInt64) -> Void] = []
    /// Loop-confined objects keyed by type, so jobs posted from other threads can find them (see `attach`).
    private var attachments: [ObjectIdentifier: AnyObject] = [:]
    /// Run when the loop finished (`whenFinished`).
    private var finishHooks: [() -> Void] = []
    var jobs: [@Sendable (LoopContext) -> Void] = []
    var localJobs: [() -> Void] = []
    var localBatch: [() -> Void] = []
    private(set) var isStopped = false
    /// Events dropped because their registration was removed or replaced earlier in the same batch (stats, tests).
    public private(set) var droppedEventCount = 0
    /// Monotonic nanoseconds sampled after each `epoll_wait`: a cheap "now" for handlers and timers.
    public internal(set) var now: UInt64

    init(eventLoop: EventLoop) throws(IOError) {
        self.eventLoop = eventLoop
        self.selector = try Selector(backend: eventLoop.backend)
        self.timerFD = selector.usesTimerFD ? try TimerFD() : nil
        self.registrations = Array(repeating: nil, count: Self.openFileLimit())
        self.now = MonotonicClock.nanoseconds()
        // Internal fds use generation 0 and are recognised by number in `dispatch`.
        if let timerFD { try selector.add(fd: timerFD.fd, interest: .read, generation: 0) }
        try selector.add(fd: eventLoop.inbox.wakeup.readFD, interest: .read, generation: 0)
    }

    deinit { timerFD?.close() }

    /// The soft `RLIMIT_NOFILE`: one registration slot per fd the process can open.
    static func openFileLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(CInt(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else { return 65_536 }
        return Int(Swift.min(limit.rlim_cur, 1 << 20))
    }

    /// Crashes in debug builds when called off the loop thread (NIO's `preconditionInEventLoop`).
    public func assertOnLoop(file: StaticString = #fileID, line: UInt = #line) {
        assert(eventLoop.inEventLoop, "LoopContext used off its loop thread", file: file, line: line)
    }

    // MARK: Registrations.

    /// Starts watching `fd` for `interest`; `handler` is called with what fires until `deregister`. The loop keeps a
    /// strong reference to `handler` while registered. Registering an fd that is already registered is a bug.
    public func register(
        fd: CInt,
        interest: SelectorEvent,
        handler: any SelectorHandler
    ) throws(IOError) -> RegistrationID {
        assertOnLoop()
        precondition(fd >= 0, "cannot register negative fd \(fd)")
        if Int(fd) >= registrations.count {
            registrations.append(contentsOf: repeatElement(nil, count: Int(fd) + 1 - registrations.count))
        }
        precondition(registrations[Int(fd)] == nil, "fd \(fd) is already registered")
        let generation = nextGeneration
        nextGeneration = nextGeneration == UInt32.max ? 1 : nextGeneration + 1
        try selector.add(fd: fd, interest: interest, generation: generation)
        registrations[Int(fd)] = Registration(generation: generation, interest: interest, handler: handler)
        registeredFDLimit = max(registeredFDLimit, Int(fd) + 1)
        return RegistrationID(fd: fd, generation: generation)
    }

    /// `register(fd:interest:handler:)` with a closure for a handler.
    public func register(
        fd: CInt,
        interest: SelectorEvent,
        _ body: @escaping (SelectorEvent) -> Void
    ) throws(IOError) -> RegistrationID {
        try register(fd: fd, interest: interest, handler: ClosureHandler(body))
    }

    /// Changes what a registration waits for (no system call if it is unchanged). `id` must be live.
    public func reregister(_ id: RegistrationID, interest: SelectorEvent) throws(IOError) {
        assertOnLoop()
        let index = Int(id.fd)
        guard let registration = registrations[index], registration.generation == id.generation else {
            preconditionFailure("reregister of \(id), which is not registered")
        }
        guard registration.interest != interest else { return }
        try selector.modify(fd: id.fd, interest: interest, generation: id.generation)
        registrations[index]!.interest = interest
    }

    /// Stops watching and releases the handler. Call before closing the fd. A stale or repeated `id` is ignored.
    public func deregister(_ id: RegistrationID) {
        assertOnLoop()
        let index = Int(id.fd)
        guard index < registrations.count, registrations[index]?.generation == id.generation else { return }
        selector.remove(fd: id.fd)
        registrations[index] = nil
    }

    /// Delivers one fired event to its handler, dropping it when the registration it was meant for is gone: the fd
    /// was deregistered, or closed and reused by a new registration, earlier in this batch.
    func deliver(fd: CInt, generation: UInt32, fired: SelectorEvent) {
        let index = Int(fd)
        guard index < registrations.count, let registration = registrations[index],
            registration.generation == generation
        else {
            droppedEventCount += 1
            return
        }
        var event = fired
        if !fired.isDisjoint(with: [.error, .reset]) {
            event.formUnion(registration.interest.intersection([.read, .write]))
        }
        // Drop readiness the handler no longer asks for (it may have changed interest earlier in this batch).
        event.formIntersection(registration.interest.union([.readEOF, .reset, .error]))
        guard !event.isEmpty else { return }
        registration.handler.handleEvent(event)
    }

    /// The registration slots worth walking: fds `0..<registrationSlots` (one past the highest fd ever registered;
    /// the table itself has a slot per fd the process can open).
    public var registrationSlots: Int { registeredFDLimit }

    /// The handler registered for `fd`, nil when none is. Housekeeping walks the slots with it instead of copying
    /// its own list of connections on every sweep.
    public func handler(of fd: Int) -> (any SelectorHandler)? {
        guard fd >= 0, fd < registrations.count else { return nil }
        return registrations[fd]?.handler
    }

    /// The current interest of a live registration, nil if `id` is not registered.
    public func interest(of id: RegistrationID) -> SelectorEvent? {
        let index = Int(id.fd)
        guard index < registrations.count, let registration = registrations[index],
            registration.generation == id.generation
        else { return nil }
        return registration.interest
    }

    /// Number of live registrations (excluding the loop's own timerfd and wake-up fd). O(setsize); for tests and stats.
    public var registrationCount: Int { registrations.reduce(0) { $0 + ($1 == nil ? 0 : 1) } }

    // MARK: Timers.

    /// Runs `body` once on this loop after `delay` (at the earliest in the next iteration).
    @discardableResult
    public func schedule(after delay: Duration, _ body: @escaping () -> Void) -> TimerID {
        scheduleTimer(delay: delay, interval: nil, body)
    }

    /// Runs `body` every `interval` until cancelled (Redis's time event returning its next delay).
    @discardableResult
    public func schedule(every interval: Duration, _ body: @escaping () -> Void) -> TimerID {
        scheduleTimer(delay: interval, interval: Self.nanoseconds(interval), body)
    }

    /// Cancels a timer; returns false if it already ran (one-shot) or was cancelled.
    @discardableResult
    public func cancel(_ timer: TimerID) -> Bool {
        assertOnLoop()
        return timers.cancel(timer)
    }

    private func scheduleTimer(delay: Duration, interval: UInt64?, _ body: @escaping () -> Void) -> TimerID {
        assertOnLoop()
        // Never at or before this iteration's `now`: a timer scheduled by a timer runs in the next iteration.
        let deadline = Swift.max(MonotonicClock.nanoseconds() &+ Self.nanoseconds(delay), now &+ 1)
        let id = timers.schedule(deadline: deadline, interval: interval.map { Swift.max($0, 1) }, body)
        armTimerIfNeeded()
        return id
    }

    private static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 0 }
        return UInt64(seconds) &* 1_000_000_000 &+ UInt64(attoseconds / 1_000_000_000)
    }

    /// Arms the one timerfd for the earliest deadline, unless it is already armed for that time or earlier (an early
    /// arming only costs a spurious wake-up, after which we re-arm). Nothing to do on the poll loop: `sleepTimeout`
    /// reads the earliest deadline before every wait.
    func armTimerIfNeeded() {
        guard let timerFD, let deadline = timers.nextDeadline() else { return }
        if let armed = armedDeadline, armed <= deadline { return }
        timerFD.arm(at: deadline)
        armedDeadline = deadline
    }

    /// How long the selector may sleep: forever with a timerfd (it wakes the wait like any fd), otherwise until the
    /// earliest timer, in whole milliseconds rounded up (poll's unit; a wake-up before the deadline would only
    /// spin).
    func sleepTimeout() -> CInt {
        if timerFD != nil { return -1 }
        guard let deadline = timers.nextDeadline() else { return -1 }
        let current = MonotonicClock.nanoseconds()
        guard deadline > current else { return 0 }
        let millis = (deadline - current + 999_999) / 1_000_000
        return CInt(clamping: millis)
    }

    // MARK: Attachments.

    /// Attaches a loop-confined object so that code on this loop (or a job posted with `EventLoop.execute`) finds it
    /// with `attachment(_:)`, by type. One object per type; attaching again replaces it. For an object that jobs
    /// from other threads reach, prefer a `LoopBound` handle: the job holds it, with no lookup and no cast.
    public func attach<T: AnyObject>(_ object: T) {
        assertOnLoop()
        attachments[ObjectIdentifier(T.self)] = object
    }

    /// The object of type `T` attached to this loop, if any.
    public func attachment<T: AnyObject>(_ type: T.Type) -> T? {
        assertOnLoop()
        return attachments[ObjectIdentifier(type)] as? T
    }

    /// Drops every attachment (when the loop finishes), breaking their references back to this context.
    func detachAll() {
        attachments.removeAll()
        let hooks = finishHooks
        finishHooks.removeAll()
        for hook in hooks { hook() }
    }

    /// Runs `hook` on this loop once it finished (after its last jobs), with the attachments (`LoopBound` lets go
    /// of its object there).
    public func whenFinished(_ hook: @escaping () -> Void) {
        assertOnLoop()
        finishHooks.append(hook)
    }

    /// Removes the attachment of type `T`.
    public func detach<T: AnyObject>(_ type: T.Type) {
        assertOnLoop()
        attachments[ObjectIdentifier(type)] = nil
    }

    // MARK: Hooks and stopping.

    /// Adds a hook run at the start of every iteration, before the loop sleeps: the place to flush writes queued
    /// during the previous iteration (Redis's `beforeSleep` → `handleClientsWithPendingWrites`).
    public func addBeforeSleep(_ hook: @escaping () -> Void) {
        assertOnLoop()
        beforeSleepHooks.append(hook)
    }

    /// Adds an observer told, before every sleep, how long the loop was busy since it last woke (nanoseconds spent in
    /// handlers, timers and jobs, then the before-sleep hooks; the sleep in `epoll_wait` excluded): the loop's load,
    /// for metrics. Costs one clock read per iteration once any observer is added (the wake-up's is read anyway).
    public func addIterationObserver(_ observer: @escaping (_ busyNanoseconds: UInt64) -> Void) {
        assertOnLoop()
        iterationObservers.append(observer)
    }

    /// Runs `job` on this loop at the end of the current iteration, after every event of this batch has been
    /// dispatched and after the timers (or in the next iteration, if called from such a job). Unlike
    /// `EventLoop.execute`, the closure need not be `Sendable`: it never leaves the loop thread, and it costs no lock
    /// and no wake-up.
    public func enqueue(_ job: @escaping () -> Void) {
        assertOnLoop()
        localJobs.append(job)
    }

    /// Makes `run` return after the current iteration (queued jobs still run).
    public func stop() {
        assertOnLoop()
        isStopped = true
    }

    /// Timers not yet fired or cancelled (tests and stats).
    public var scheduledTimerCount: Int { timers.count }

    /// The epoll fd this loop sleeps on (nil with the poll backend): readable whenever `epoll_wait` would return
    /// events, i.e. a registered fd is ready, a timer is due or another thread posted a job. For a before-sleep hook
    /// that sleeps in the loop's place (the load generator's io_uring reader waits in its ring, which it has poll
    /// this fd, so that the loop's own events end that wait). Only poll it: waiting on it or reading it would take
    /// the loop's events.
    public var readinessFD: CInt? {
        switch selector {
        case .epoll(let epoll): epoll.fd
        case .poll: nil
        }
    }
}

@available(*, unavailable)
extension LoopContext: Sendable {}

/// Adapts a closure to `SelectorHandler`.
private final class ClosureHandler: SelectorHandler {
    private let body: (SelectorEvent) -> Void
    init(_ body: @escaping (SelectorEvent) -> Void) { self.body = body }
    func handleEvent(_ event: SelectorEvent) { body(event) }
}
