import CLonglinkBenchUring
import Glibc
import LonglinkCore
import LonglinkLoop

/// How the load generator reads its subscribers' sockets (`--reader`).
///
/// - `.ioUring`: once subscribed, a plain-TCP subscriber's socket is read by a multishot receive on the loop's
///   io_uring (`BenchUringReader`) into provided buffers, and the loop sleeps in the ring.
/// - `.epoll`: every read is a `read` after `epoll_wait` said the socket is readable (the loop's own path).
public enum BenchReader: String, Sendable, CaseIterable, CustomStringConvertible {
    case epoll
    case ioUring = "io_uring"

    public var description: String { rawValue }

    /// The reader to use: `requested`, or with nil the default: io_uring where this kernel allows it for a fan-out
    /// as fast as acknowledged, epoll for a paced one (`paced`: at a fixed rate the ring's batching saved no CPU in
    /// the measurements and would only time deliveries later). `probe` says why io_uring cannot be used (nil: it
    /// can). Returns the reader and, when the default fell back to epoll for want of io_uring, the message saying
    /// why; throws when io_uring was asked for and is not available.
    static func resolve(
        _ requested: BenchReader?,
        paced: Bool = false,
        probe: () -> String? = BenchUringReader.unavailableReason
    ) throws(BenchError) -> (reader: BenchReader, note: String?) {
        if requested == .epoll || (requested == nil && paced) { return (.epoll, nil) }
        guard let reason = probe() else { return (.ioUring, nil) }
        if requested == .ioUring { throw BenchError("--reader io_uring: io_uring is not available here (\(reason)); use --reader epoll") }
        return (.epoll, "subscribers read with epoll: io_uring is not available here (\(reason))")
    }
}

/// What the ring hands the bytes it received for a connection to. Loop-confined.
protocol BenchRingReadable: AnyObject {
    /// `bytes` arrived (borrowed: valid only during the call), seen by the loop at `now` (monotonic ns).
    func ringDidReceive(_ bytes: UnsafeRawBufferPointer, at now: UInt64)
    /// The receive ended for good: the peer closed (`nil`) or an error.
    func ringDidEnd(error: String?)
}

/// One loop's io_uring, reading the sockets of subscribers that `attach` hands it. Loop-confined (an attachment of
/// its `LoopContext`, created by `of`).
///
/// Why: on many routes the load generator made one `read` per delivery and `epoll_wait` returned about once per
/// five deliveries, each return a sleep and a wake-up (8–12 µs of kernel time on this machine). Here each socket
/// has one multishot receive (`IORING_OP_RECV` + `IORING_RECV_MULTISHOT`) that takes a buffer from a provided-buffer
/// ring for every chunk of data, so reading costs no system call per delivery; the ring is set up with
/// `DEFER_TASKRUN`, so the kernel receives the data only when this thread enters the ring, and a wait for `batch`
/// completions does not wake the thread for fewer.
///
/// How it fits the loop (LonglinkLoop knows nothing of it beyond `readinessFD`): while any socket is attached, the
/// loop sleeps in the ring, not in `epoll_wait`. The reader's before-sleep hook submits what is queued (receives,
/// cancels, a poll of the loop's epoll fd) and enters the ring: it takes the completions that are ready (the kernel
/// runs the receives that waited, about 20 per call) or sleeps until the first one comes, or, with `batch` > 1,
/// until `batch` came or `minWaitNanoseconds` passed with at least one (the kernel's minimum wait), and at most
/// `idleWaitNanoseconds` when nothing comes. It hands every completion to its connection and leaves an empty local
/// job on the loop, so that the loop's `epoll_wait` only polls: the loop handles its own events and comes straight
/// back to the ring. The ring's poll of the loop's epoll fd ends a sleep when those events are due (a timer, a job
/// from another thread, a socket still on epoll). Data that arrives while the thread works waits in the kernel, not
/// in a system call per socket, and the thread sleeps only when nothing is left.
///
/// Why the loop must not sleep in `epoll_wait` while sockets are attached: with `DEFER_TASKRUN` nothing posts a
/// completion until this thread enters the ring, and the kernel's only other notice of new data, an eventfd the
/// ring can register, is written late: on this kernel (Linux 6.18) 10–30 ms after the data arrived, while the
/// ring's `IORING_SQ_TASKRUN` flag is set at once and a thread waiting in the ring is woken at once. The reader used
/// to wake the loop through that eventfd, and after a ring wait that ended empty the loop slept in `epoll_wait`
/// while the publisher's answers and new deliveries sat in the ring, until its next timer (the publisher's 10 ms
/// tick): on many routes about every other run delivered 19–28 k/s with a p90 of 8–10 ms (83–115 k/s and 0.8 ms
/// with epoll), and Redis through the same reader stalled the same way. Its count of completions to wait for also
/// adapted wrongly: the kernel returns -ETIME only when no completion at all is ready, so a wait that timed out with
/// 1 of 32 passed for one that was met, and each such wait lasted the full 250 µs; waiting for a batch at all holds
/// the publisher's answers, which the next publishes wait for (see `defaultBatch`).
final class BenchUringReader {
    /// A connection's place in the ring: its slot and the slot's generation (stale completions are dropped).
    /// 8 bytes, so a connection can hold one inline; generation 0 is `none` (slots count from generation 1).
    struct Token: Equatable {
        let slot: UInt32
        let generation: UInt32
        static let none = Token(slot: 0, generation: 0)
        var isAttached: Bool { generation != 0 }
        var userData: UInt64 { UInt64(generation) << 32 | UInt64(slot) }
    }

    /// Completions a sleep in the ring waits for, and, when more than one, how long a completion that came waits for
    /// the others (rounded up to whole µs). `batch` is forced to 1 where the kernel has no minimum wait (before
    /// Linux 6.12), since a batch would then wait for the idle bound.
    let batch: UInt32
    let minWaitNanoseconds: Int64
    /// The longest wait when nothing at all arrives: the loop's epoll fd is polled through the ring, so this only
    /// bounds what that poll does not see (a local job that another job queued, or a loop without an epoll fd).
    static let idleWaitNanoseconds: Int64 = 1_000_000
    private let ring: OpaquePointer
    /// The loop's epoll fd, polled through the ring while sockets are attached (nil: poll backend, or the kernel
    /// refused the poll); whether that poll is armed.
    private var loopFD: CInt?
    private var loopPollArmed = false
    private var readers: [(any BenchRingReadable)?] = []
    private var generations: [UInt32] = []
    private var fds: [CInt] = []
    private var freeSlots: [Int] = []
    /// Connections attached now.
    private(set) var attachedCount = 0
    /// Whether `closeRing` ran (the loop finished).
    private var closed = false
    private let completions: UnsafeMutablePointer<CLonglinkBenchUringCompletion>
    private static let completionCapacity = 512
    private static let cancelUserData = UInt64.max
    private static let loopPollUserData = UInt64.max - 1
    private unowned let context: LoopContext
    private let recorder: LoopRecorder?
    /// Statistics for tests and the report: ring entries (wake-ups or not), completions handled, re-armed receives,
    /// and waits that ended because the loop's own events were due.
    private(set) var enters = 0
    private(set) var completionsHandled = 0
    private(set) var rearms = 0
    private(set) var loopWakeups = 0

    /// Ring sizes: 4,096 submission slots (16,384 completions), 4,096 provided buffers of 4 KiB (16 MiB per loop).
    static let entries: UInt32 = 4096
    static let bufferCount: UInt32 = 4096
    static let bufferSize: UInt32 = 4096
    /// Defaults of `batch` and `minWaitNanoseconds`. A sleep ends at the first completion: the publisher keeps a
    /// window of publishes in flight and sends the next one only when one is answered, so an answer held for
    /// company is throughput taken from the many-route figure (holding completions 20–50 µs, 32 at most, read
    /// 5–10 % fewer deliveries/s than epoll in alternating runs; ending at the first read as many). The ring still
    /// batches: whatever arrived while the thread worked is taken in one call. `--reader-batch` above 1 trades the
    /// answers' delay for fewer calls (with 50 µs: 8–10 completions per call on many routes instead of 2–5, which
    /// against Redis was 3.5–5 µs of load-generator CPU per delivery instead of 5–8).
    static let defaultBatch: UInt32 = 1
    static let defaultMinWaitNanoseconds: Int64 = 50_000

    private init(ring: OpaquePointer, context: LoopContext, batch: UInt32, minWaitNanoseconds: Int64) {
        self.ring = ring
        self.context = context
        self.batch = CLonglinkBenchUring_hasMinWait(ring) != 0 ? max(1, batch) : 1
        self.minWaitNanoseconds = max(1_000, minWaitNanoseconds)
        self.loopFD = context.readinessFD
        self.recorder = context.attachment(LoopRecorder.self)
        completions = .allocate(capacity: Self.completionCapacity)
    }

    deinit {
        if !closed { CLonglinkBenchUring_close(ring) }
        completions.deallocate()
    }

    /// When the loop finishes: closes the ring (the kernel cancels what is still armed) and lets go of every
    /// connection, which hold the reader.
    private func closeRing() {
        guard !closed else { return }
        closed = true
        readers.removeAll()
        CLonglinkBenchUring_close(ring)
    }

    /// The reader of `context`'s loop, created on first use (nil when the ring cannot be opened: use epoll);
    /// `bufferCount` (a power of two) lets a test run it short of buffers.
    static func of(
        _ context: LoopContext,
        batch: UInt32 = defaultBatch,
        minWaitNanoseconds: Int64 = defaultMinWaitNanoseconds,
        bufferCount: UInt32 = bufferCount
    ) -> BenchUringReader? {
        if let reader = context.attachment(BenchUringReader.self) { return reader }
        guard case .success(let ring) = open(entries: entries, bufferCount: bufferCount, bufferSize: bufferSize) else { return nil }
        let reader = BenchUringReader(
            ring: ring,
            context: context,
            batch: batch,
            minWaitNanoseconds: minWaitNanoseconds
        )
        context.attach(reader)
        context.addBeforeSleep { [unowned reader] in reader.beforeSleep() }
        context.whenFinished { reader.closeRing() }
        return reader
    }

    private static func open(entries: UInt32, bufferCount: UInt32, bufferSize: UInt32) -> Result<OpaquePointer, BenchError> {
        var error: CInt = 0
        var step: UnsafePointer<CChar>?
        guard let ring = CLonglinkBenchUring_open(entries, bufferCount, bufferSize, &error, &step) else {
            let name = step.map { String(cString: $0) } ?? "io_uring"
            return .failure(BenchError("\(name): \(String(cString: strerror(error)))"))
        }
        return .success(ring)
    }

    /// Why this process cannot read sockets through io_uring, nil when it can: opens a small ring (setup, mmap,
    /// provided buffers) and receives one message over a socket pair with a multishot receive.
    static func unavailableReason() -> String? {
        let ring: OpaquePointer
        switch open(entries: 8, bufferCount: 8, bufferSize: 4096) {
        case .failure(let error): return error.message
        case .success(let opened): ring = opened
        }
        defer { CLonglinkBenchUring_close(ring) }
        var pair: [CInt] = [-1, -1]
        guard socketpair(AF_UNIX, CInt(SOCK_STREAM.rawValue) | CInt(SOCK_NONBLOCK.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            return "socketpair: \(String(cString: strerror(errno)))"
        }
        defer {
            close(pair[0])
            close(pair[1])
        }
        guard CLonglinkBenchUring_queueReceive(ring, pair[0], 1) == 0 else { return "no submission slot" }
        let submitted = CLonglinkBenchUring_enter(ring, 0, 0, 1_000_000)
        guard submitted >= 0 else { return "io_uring_enter: \(String(cString: strerror(-submitted)))" }
        var byte: UInt8 = 42
        guard write(pair[1], &byte, 1) == 1 else { return "write: \(String(cString: strerror(errno)))" }
        var completion = CLonglinkBenchUringCompletion()
        let deadline = MonotonicClock.nanoseconds() + 1_000_000_000
        while MonotonicClock.nanoseconds() < deadline {
            let waited = CLonglinkBenchUring_enter(ring, 1, 0, 100_000_000)
            if waited < 0 && waited != -ETIME && waited != -EINTR { return "io_uring_enter: \(String(cString: strerror(-waited)))" }
            guard CLonglinkBenchUring_reap(ring, &completion, 1) == 1 else { continue }
            if completion.result == 1 && completion.flags & CLonglinkBenchUring_completionHasBuffer() != 0 {
                return completion.flags & CLonglinkBenchUring_completionHasMore() != 0 ? nil : "multishot receive not supported"
            }
            return "multishot receive: \(completion.result < 0 ? String(cString: strerror(-completion.result)) : "result \(completion.result)")"
        }
        return "multishot receive: no completion within 1 s"
    }

    /// Starts reading `fd` for `reader` (the socket must be drained: bytes already read stay with the caller).
    func attach(fd: CInt, reader: any BenchRingReadable) -> Token {
        precondition(!closed, "attach after the loop finished")
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = free
            readers[slot] = reader
            fds[slot] = fd
        } else {
            slot = readers.count
            readers.append(reader)
            generations.append(1)
            fds.append(fd)
        }
        attachedCount += 1
        let token = Token(slot: UInt32(slot), generation: generations[slot])
        queueReceive(fd: fd, userData: token.userData)
        return token
    }

    /// Stops reading for `token` (its receive is cancelled at the next submission; the caller may close the fd
    /// now: the pending request holds the socket until then). Nothing more reaches its reader.
    func detach(_ token: Token) {
        let slot = Int(token.slot)
        guard !closed, token.isAttached, slot < readers.count, generations[slot] == token.generation, readers[slot] != nil
        else { return }
        release(slot: slot)
        while CLonglinkBenchUring_queueCancel(ring, token.userData, Self.cancelUserData) == -EBUSY { submitNow() }
    }

    private func release(slot: Int) {
        readers[slot] = nil
        generations[slot] &+= 1
        if generations[slot] == 0 { generations[slot] = 1 }
        freeSlots.append(slot)
        attachedCount -= 1
    }

    private func queueReceive(fd: CInt, userData: UInt64) {
        while CLonglinkBenchUring_queueReceive(ring, fd, userData) == -EBUSY { submitNow() }
    }

    /// Submits what is queued without waiting (the submission queue is full).
    private func submitNow() {
        _ = CLonglinkBenchUring_enter(ring, 0, 0, 0)
        reap()
    }

    /// Before the loop sleeps: while sockets are attached, wait in the ring (see the type's comment), hand out the
    /// completions, and keep the loop from sleeping in `epoll_wait`; otherwise only submit and reap what is there.
    private func beforeSleep() {
        guard !closed else { return }
        guard attachedCount > 0 else {
            // Nothing to receive: submit what is queued (the cancels of the last detached sockets) and reap what
            // their task work posts, without waiting; the loop may sleep in epoll_wait.
            guard CLonglinkBenchUring_queued(ring) > 0 || CLonglinkBenchUring_hasTaskWork(ring) != 0 else { return }
            enters += 1
            _ = CLonglinkBenchUring_enter(ring, 0, 0, 0)
            reap()
            recorder?.flushDeliveries()
            return
        }
        if !loopPollArmed, let loopFD {
            while CLonglinkBenchUring_queuePoll(ring, loopFD, Self.loopPollUserData) == -EBUSY { submitNow() }
            loopPollArmed = true
        }
        enters += 1
        let minWaitMicroseconds = UInt32(clamping: (minWaitNanoseconds + 999) / 1_000)
        let result = CLonglinkBenchUring_enter(ring, batch, minWaitMicroseconds, Self.idleWaitNanoseconds)
        if result < 0 && result != -ETIME && result != -EINTR && result != -EBUSY && result != -EAGAIN {
            // The ring itself failed (should not happen): every attached connection ends with the reason.
            let reason = "io_uring_enter: \(String(cString: strerror(-result)))"
            for slot in readers.indices {
                guard let reader = readers[slot] else { continue }
                release(slot: slot)
                reader.ringDidEnd(error: reason)
            }
            return
        }
        reap()
        recorder?.flushDeliveries()
        // The next wait happens here again, not in epoll_wait (which data arriving in the ring would wake 10–30 ms
        // late): a local job makes the loop's next epoll_wait only poll; its events are handled, then this hook runs.
        if attachedCount > 0 { context.enqueue {} }
    }

    /// Hands every ready completion to its connection, recycles its buffer and re-arms a receive that ended
    /// without the connection ending (the kernel ran out of provided buffers).
    @discardableResult
    private func reap() -> Int {
        let now = MonotonicClock.nanoseconds()
        var total = 0
        let hasBuffer = CLonglinkBenchUring_completionHasBuffer()
        let hasMore = CLonglinkBenchUring_completionHasMore()
        let shift = CLonglinkBenchUring_bufferShift()
        while true {
            let count = Int(CLonglinkBenchUring_reap(ring, completions, UInt32(Self.completionCapacity)))
            guard count > 0 else { return total }
            completionsHandled += count
            total += count
            for index in 0..<count {
                let completion = completions[index]
                guard completion.userData != Self.cancelUserData else { continue }
                if completion.userData == Self.loopPollUserData {
                    // The loop's epoll fd is readable (its events are handled after this hook), or the kernel
                    // refused to poll it: then the idle bound alone ends the waits.
                    loopPollArmed = false
                    if completion.result >= 0 || completion.result == -ECANCELED {
                        loopWakeups += 1
                    } else {
                        loopFD = nil
                    }
                    continue
                }
                let buffered = completion.flags & hasBuffer != 0
                let bufferID = completion.flags >> shift
                defer { if buffered { CLonglinkBenchUring_recycle(ring, bufferID) } }
                let slot = Int(truncatingIfNeeded: completion.userData & 0xFFFF_FFFF)
                let generation = UInt32(truncatingIfNeeded: completion.userData >> 32)
                guard slot < readers.count, generations[slot] == generation, let reader = readers[slot] else { continue }
                let result = completion.result
                if result > 0 && buffered {
                    let bytes = UnsafeRawBufferPointer(start: CLonglinkBenchUring_buffer(ring, bufferID), count: Int(result))
                    reader.ringDidReceive(bytes, at: now)
                } else if result == 0 {
                    release(slot: slot)
                    reader.ringDidEnd(error: nil)
                    continue
                } else if result < 0 && result != -ENOBUFS && result != -ECANCELED {
                    release(slot: slot)
                    reader.ringDidEnd(error: "recv: \(String(cString: strerror(-result)))")
                    continue
                }
                // Re-arm when the kernel ended the multishot receive (no buffer left, or a spurious end) and the
                // connection is still attached (its handler may have detached it above).
                if completion.flags & hasMore == 0 && generations[slot] == generation && readers[slot] != nil {
                    rearms += 1
                    queueReceive(fd: fds[slot], userData: completion.userData)
                }
            }
            CLonglinkBenchUring_publishBuffers(ring)
        }
    }
}

@available(*, unavailable)
extension BenchUringReader: Sendable {}
