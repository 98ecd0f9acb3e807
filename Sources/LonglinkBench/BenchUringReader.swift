import CLonglinkBenchUring
import Glibc
import LonglinkCore
import LonglinkLoop

/// How the load generator reads its subscribers' sockets (`--reader`).
///
/// - `.ioUring`: once subscribed, a plain-TCP subscriber's socket is read by a multishot receive on the loop's
///   io_uring (`BenchUringReader`) into provided buffers, and the loop waits for several completions per wake-up.
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
/// completions does not wake the thread for fewer (until `maxWaitNanoseconds`).
///
/// How it fits the loop (LonglinkLoop knows nothing of it): the kernel writes the ring's eventfd, registered with
/// the loop's epoll, when the first data waits, which wakes `epoll_wait`; the reader's before-sleep hook then
/// submits what is queued (receives, cancels) and, if the eventfd fired, enters the ring waiting for up to `batch`
/// completions or `maxWaitNanoseconds`, whichever comes first, and hands every completion to its connection. The
/// count adapts to the traffic (halved after a wait that timed out, one more after one that was met), since the
/// publisher keeps only a window of publishes in flight and waits for their answers, which come through the ring
/// too.
/// While data keeps arriving the eventfd is readable again by then, so the loop's `epoll_wait` returns at once and
/// the thread sleeps only in the ring's wait: one sleep per `batch` deliveries instead of one per ~5. The bound
/// keeps the latency figures honest: a delivery is timed when the loop sees it, at most `maxWaitNanoseconds`
/// after it arrived, and the publisher's answers (still on epoll) wait at most as long.
final class BenchUringReader: SelectorHandler {
    /// A connection's place in the ring: its slot and the slot's generation (stale completions are dropped).
    /// 8 bytes, so a connection can hold one inline; generation 0 is `none` (slots count from generation 1).
    struct Token: Equatable {
        let slot: UInt32
        let generation: UInt32
        static let none = Token(slot: 0, generation: 0)
        var isAttached: Bool { generation != 0 }
        var userData: UInt64 { UInt64(generation) << 32 | UInt64(slot) }
    }

    /// Completions to wait for per wake-up at most, and the longest wait for them.
    let batch: UInt32
    let maxWaitNanoseconds: Int64
    /// Completions the next wait asks for (adapts within 1…batch: see `beforeSleep`).
    private(set) var target: UInt32
    private let ring: OpaquePointer
    private var registration: RegistrationID?
    private var readers: [(any BenchRingReadable)?] = []
    private var generations: [UInt32] = []
    private var fds: [CInt] = []
    private var freeSlots: [Int] = []
    /// Connections attached now.
    private(set) var attachedCount = 0
    /// Whether the eventfd fired since the last hook (data is flowing: worth waiting for a batch).
    private var signalled = false
    /// Whether `closeRing` ran (the loop finished).
    private var closed = false
    private let completions: UnsafeMutablePointer<CLonglinkBenchUringCompletion>
    private static let completionCapacity = 512
    private static let cancelUserData = UInt64.max
    private unowned let context: LoopContext
    private let recorder: LoopRecorder?
    /// Statistics for tests and the report: ring entries (wake-ups or not), completions handled, re-armed receives.
    private(set) var enters = 0
    private(set) var completionsHandled = 0
    private(set) var rearms = 0
    private(set) var timeouts = 0

    /// Ring sizes: 4,096 submission slots (16,384 completions), 4,096 provided buffers of 4 KiB (16 MiB per loop).
    static let entries: UInt32 = 4096
    static let bufferCount: UInt32 = 4096
    static let bufferSize: UInt32 = 4096
    /// Defaults of `batch` and `maxWaitNanoseconds`.
    static let defaultBatch: UInt32 = 32
    static let defaultMaxWaitNanoseconds: Int64 = 250_000

    private init(ring: OpaquePointer, context: LoopContext, batch: UInt32, maxWaitNanoseconds: Int64) {
        self.ring = ring
        self.context = context
        self.batch = max(1, batch)
        self.target = max(1, batch)
        self.maxWaitNanoseconds = max(1_000, maxWaitNanoseconds)
        self.recorder = context.attachment(LoopRecorder.self)
        completions = .allocate(capacity: Self.completionCapacity)
    }

    deinit {
        if !closed { CLonglinkBenchUring_close(ring) }
        completions.deallocate()
    }

    /// When the loop finishes: closes the ring (the kernel cancels what is still armed) and lets go of every
    /// connection and of the eventfd's registration, which hold the reader.
    private func closeRing() {
        guard !closed else { return }
        closed = true
        if let registration { context.deregister(registration) }
        registration = nil
        readers.removeAll()
        CLonglinkBenchUring_close(ring)
    }

    /// The reader of `context`'s loop, created on first use (nil when the ring cannot be opened: use epoll);
    /// `bufferCount` (a power of two) lets a test run it short of buffers.
    static func of(
        _ context: LoopContext,
        batch: UInt32 = defaultBatch,
        maxWaitNanoseconds: Int64 = defaultMaxWaitNanoseconds,
        bufferCount: UInt32 = bufferCount
    ) -> BenchUringReader? {
        if let reader = context.attachment(BenchUringReader.self) { return reader }
        guard case .success(let ring) = open(entries: entries, bufferCount: bufferCount, bufferSize: bufferSize) else { return nil }
        let reader = BenchUringReader(ring: ring, context: context, batch: batch, maxWaitNanoseconds: maxWaitNanoseconds)
        do {
            reader.registration = try context.register(fd: CLonglinkBenchUring_eventFD(ring), interest: .read, handler: reader)
        } catch {
            return nil
        }
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
    /// provided buffers, eventfd) and receives one message over a socket pair with a multishot receive.
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
        let submitted = CLonglinkBenchUring_enter(ring, 0, 1_000_000)
        guard submitted >= 0 else { return "io_uring_enter: \(String(cString: strerror(-submitted)))" }
        var byte: UInt8 = 42
        guard write(pair[1], &byte, 1) == 1 else { return "write: \(String(cString: strerror(errno)))" }
        var completion = CLonglinkBenchUringCompletion()
        let deadline = MonotonicClock.nanoseconds() + 1_000_000_000
        while MonotonicClock.nanoseconds() < deadline {
            let waited = CLonglinkBenchUring_enter(ring, 1, 100_000_000)
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
        _ = CLonglinkBenchUring_enter(ring, 0, 0)
        reap()
    }

    /// The eventfd fired: data waits in the ring.
    func handleEvent(_ event: SelectorEvent) {
        var value: UInt64 = 0
        _ = read(CLonglinkBenchUring_eventFD(ring), &value, 8)
        signalled = true
    }

    /// Before the loop sleeps: submit, wait for a batch when data is flowing, and hand out the completions.
    private func beforeSleep() {
        guard !closed else { return }
        let flowing = signalled
        signalled = false
        guard flowing || CLonglinkBenchUring_queued(ring) > 0 || CLonglinkBenchUring_hasTaskWork(ring) != 0 else { return }
        enters += 1
        let waitFor = flowing && attachedCount > 0 ? target : 0
        let result = CLonglinkBenchUring_enter(ring, waitFor, maxWaitNanoseconds)
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
        let got = reap()
        recorder?.flushDeliveries()
        // The publisher is a closed loop (a window of publishes in flight): a wait for more completions than can
        // come before it answers them ends only at the timeout, a bubble in the pipeline. So the count adapts:
        // halved (to half of what came) when a wait timed out, grown by one when it was met, within 1…batch.
        if waitFor > 0 {
            if result == -ETIME && got < Int(waitFor) {
                target = max(1, UInt32(got / 2))
                timeouts += 1
            } else if target < batch {
                target += 1
            }
        }
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
