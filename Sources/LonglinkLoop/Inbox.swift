import Synchronization

/// The cross-thread queue of one loop: a locked job array plus a `WakeupChannel` (an eventfd on the epoll loop, a
/// self-pipe on the poll loop) that wakes the selector.
///
/// Wake-ups are merged (NIO's `_pendingTaskPop`): only the first `post` after a drain writes the eventfd; later
/// posts see `wakeupPending` and just append. The loop reads the eventfd when it fires, then `take`s the jobs and
/// clears `wakeupPending` under the same lock, so a job posted after the take always writes the eventfd again.
final class Inbox: Sendable {
    private struct State {
        var jobs: [@Sendable (LoopContext) -> Void] = []
        var wakeupPending = false
        var closed = false
    }

    /// The wake-up fd(s); `wakeup.readFD` is registered on the loop's selector.
    let wakeup: WakeupChannel
    private let state = Mutex(State())
    private let wakeups = Atomic<Int>(0)

    init(backend: SelectorBackend) throws(IOError) {
        wakeup = try WakeupChannel.make(for: backend)
    }

    deinit { wakeup.close() }

    /// How many times `post` wrote the eventfd (diagnostics and tests: fewer than posts when merging works).
    var wakeupCount: Int { wakeups.load(ordering: .relaxed) }

    /// Appends a job; writes the eventfd only if no wake-up is pending. Returns false once the inbox is closed.
    func post(_ job: @escaping @Sendable (LoopContext) -> Void) -> Bool {
        let (accepted, mustWake) = state.withLock { state -> (Bool, Bool) in
            guard !state.closed else { return (false, false) }
            state.jobs.append(job)
            if state.wakeupPending { return (true, false) }
            state.wakeupPending = true
            return (true, true)
        }
        if mustWake { wake() }
        return accepted
    }

    /// Appends a job from the loop's own thread without writing the eventfd: the loop is awake, and before it
    /// sleeps it sees `hasJobs` and only polls. Saves the write, the wake-up and the read of the eventfd that a
    /// Store commit on the loop would otherwise cost for its own deliveries and publish results.
    func postFromLoop(_ job: @escaping @Sendable (LoopContext) -> Void) -> Bool {
        state.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.jobs.append(job)
            return true
        }
    }

    /// Whether jobs wait (the loop then polls instead of sleeping).
    var hasJobs: Bool { state.withLock { !$0.jobs.isEmpty } }

    /// Signals the wake-up channel (a full channel means the loop is already woken).
    func wake() {
        wakeups.add(1, ordering: .relaxed)
        wakeup.signal()
    }

    /// Clears the wake-up channel's readiness (called when the selector reports it).
    func acknowledge() { wakeup.acknowledge() }

    /// Moves the pending jobs into `batch` (an empty array whose capacity is reused) and re-enables wake-ups.
    func take(into batch: inout [@Sendable (LoopContext) -> Void]) {
        state.withLock { state in
            swap(&state.jobs, &batch)
            state.wakeupPending = false
        }
    }

    /// Refuses further posts; returns the jobs still queued so the loop can run them before exiting.
    func close(into batch: inout [@Sendable (LoopContext) -> Void]) {
        state.withLock { state in
            state.closed = true
            swap(&state.jobs, &batch)
        }
    }
}
