import LonglinkLoop

/// Back-pressure on a peer that sends requests faster than it reads the answers (pipelined pings, refused
/// subscribes or publishes, with a reader that never reads).
///
/// Every answer is queued, and the queue is bounded by the outbound limit (`enqueue` cuts with `slow` past it).
/// Before each inbound frame is processed, the connection checks whether its answers are backlogged: the queue at
/// or past the high-water mark (half the limit), or too many publishes waiting for the Store. Then it stops:
/// the frames already read stay in the inbound buffer, `.read` interest is dropped, and TCP flow control holds
/// the rest in the kernel and then in the peer. It resumes once the queue is back at the low-water mark (a
/// quarter of the limit) and the Store has answered. A peer that takes no byte for the pong timeout while it is
/// paused does not read at all: it is cut with `slow`, like a subscriber that cannot keep up.
extension Connection {
    /// Whether no further frame should be processed until the peer reads what is queued. `owner` is this
    /// connection's loop gateway, passed in by the frame loop that holds it already (each access through the
    /// `unowned` property costs a retain and a release).
    func answersBacklogged(on owner: LoopGateway) -> Bool {
        outbound.queuedBytes >= owner.outboundHighWater || pendingPublishes >= owner.maxPendingPublishes
    }

    /// Stops reading and processing frames (the queue is past the high-water mark).
    func pauseReads() {
        guard !readsPaused else { return }
        readsPaused = true
        lastDrainMillis = owner.nowMillis
        updateInterest()
    }

    /// After a flush: once the queue is down to the low-water mark and the Store has answered enough publishes,
    /// resumes in a loop-local job at the end of this iteration (so the Store work the buffered frames queue is
    /// committed, and their answers flushed, before the loop sleeps again). The frames already buffered are
    /// processed first; then the transport is read at once (a TLS transport may hold decrypted bytes that epoll
    /// cannot report).
    func resumeReadsIfDrained() {
        guard readsPaused, !resumeScheduled, drainedEnough else { return }
        resumeScheduled = true
        owner.context.enqueue { [weak self] in
            guard let self, !self.isClosed else { return }
            self.resumeScheduled = false
            guard self.readsPaused, self.drainedEnough else { return }
            self.readsPaused = false
            self.processFrames()
            if !self.readsPaused && !self.isClosed { self.readAvailable() }
            self.updateInterest()
        }
    }

    private var drainedEnough: Bool {
        outbound.queuedBytes <= owner.outboundLowWater && pendingPublishes < owner.maxPendingPublishes
    }

    /// Housekeeping: a paused peer that took no byte for the pong timeout is cut with `slow`.
    func checkStalled(nowMillis: UInt64) {
        guard readsPaused, !outbound.isEmpty, nowMillis &- lastDrainMillis >= owner.stallMillis else { return }
        cutSlow(because: "reads no bytes while \(outbound.queuedBytes) wait")
    }
}
