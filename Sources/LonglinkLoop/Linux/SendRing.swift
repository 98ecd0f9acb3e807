import CLonglinkLinux
import Glibc

/// Many connections' pending bytes sent with one system call: the loop's before-sleep flush copies each
/// connection's unwritten bytes into this ring's staging memory, queues one non-blocking send per connection, and
/// `submit()` hands them all to the kernel with one `io_uring_enter` (instead of one `send` per connection), which
/// returns once every send has its result: bytes sent, or an error such as `EAGAIN` for a full socket (never a
/// send left waiting in the kernel, so the staging memory is free again when it returns).
///
/// One per event loop, used only on its thread. The copy costs a `memcpy` of bytes the flush was about to hand the
/// kernel anyway; a connection with more than `stagingLimitPerSend` bytes queued writes them itself, with no copy.
public final class SendRing {
    private let ring: OpaquePointer
    private let staging: UnsafeMutableRawBufferPointer
    private var stagingUsed = 0
    private let results: UnsafeMutablePointer<Int32>
    /// The most sends one submission takes.
    public let capacity: Int
    /// The most bytes one connection's send copies into the staging memory.
    public let stagingLimitPerSend: Int

    /// A ring for `sends` sends per submission with `stagingBytes` of staging memory; throws when the kernel
    /// offers no io_uring (too old, or disabled for this process): the caller then writes per connection.
    public init(sends: Int = 256, stagingBytes: Int = 64 * 1024, stagingLimitPerSend: Int = 8 * 1024) throws(IOError) {
        var error: CInt = 0
        guard let ring = CLonglinkLinux_sendRingCreate(UInt32(clamping: sends), &error) else {
            throw IOError(errno: error, function: "io_uring_setup")
        }
        self.ring = ring
        self.capacity = Int(CLonglinkLinux_sendRingCapacity(ring))
        self.staging = .allocate(byteCount: stagingBytes, alignment: 64)
        self.results = .allocate(capacity: capacity)
        self.stagingLimitPerSend = Swift.min(stagingLimitPerSend, stagingBytes)
    }

    deinit {
        CLonglinkLinux_sendRingDestroy(ring)
        staging.deallocate()
        results.deallocate()
    }

    /// Sends queued for the next submission.
    public var queued: Int { Int(CLonglinkLinux_sendRingQueued(ring)) }

    /// Whether a queue of `queuedBytes` may be sent through the ring: at most `stagingLimitPerSend` bytes.
    @inline(__always)
    public func accepts(queuedBytes: Int) -> Bool { queuedBytes <= stagingLimitPerSend }

    /// Copies `queue`'s unwritten bytes into staging memory and queues their send to `fd`: the send's index in the
    /// next submission's results, or nil when the ring or its staging memory is full (submit, then try again).
    /// (`inout` only so the queue is read where it lies, not copied: it is not changed.)
    public func stage(_ queue: inout OutboundQueue, to fd: CInt) -> Int? {
        let count = queue.queuedBytes
        guard count > 0, count <= staging.count - stagingUsed, let base = staging.baseAddress else { return nil }
        let destination = UnsafeMutableRawBufferPointer(start: base + stagingUsed, count: count)
        let copied = queue.copyUnwritten(into: destination)
        // -1: the ring holds `capacity` sends already.
        let index = CLonglinkLinux_sendRingQueue(ring, fd, destination.baseAddress, UInt32(copied))
        guard index >= 0 else { return nil }
        stagingUsed += copied
        return Int(index)
    }

    /// Submits every queued send with one `io_uring_enter` and waits for their results (`result(of:)`); the
    /// staging memory is free again afterwards. Returns an error only when the ring itself failed; the sends
    /// without a result then read `ECANCELED` (the others still have theirs).
    @discardableResult
    public func submit() -> IOError? {
        stagingUsed = 0
        let outcome = CLonglinkLinux_sendRingSubmit(ring, results)
        return outcome < 0 ? IOError(errno: -outcome, function: "io_uring_enter") : nil
    }

    /// The result of send `index` of the last submission: the bytes the socket took, or the negated `errno`.
    @inline(__always)
    public func result(of index: Int) -> Int32 { results[index] }
}

@available(*, unavailable)
extension SendRing: Sendable {}
