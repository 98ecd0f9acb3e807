import Glibc
import LonglinkCore
import LonglinkLoop
import Synchronization

/// The flush stage through the loop's send ring: every connection with bytes pending, in one system call.
extension LoopGateway {
    /// The send ring for `mode` (nil for `.each`, or when the kernel offers no io_uring: logged once per loop).
    static func makeSendRing(_ mode: FlushMode, loop: Int, shared: GatewayShared) -> SendRing? {
        guard mode == .ring else { return nil }
        do {
            let ring = try SendRing()
            shared.counters.flushRingLoops.add(1, ordering: .relaxed)
            return ring
        } catch {
            shared.logger.warning("loop \(loop): no send ring (\(error)); each connection sends by itself (flush = each)")
            return nil
        }
    }

    /// Sends the pending bytes of `batch`, a ring's worth at a time, in four steps that keep the staged copies true:
    /// 1. stage: each connection whose transport sends its queue as it is, with a queue the ring takes, has its
    ///    unwritten bytes copied into the ring (nothing else runs meanwhile, so no queue changes under its copy);
    /// 2. submit them all with one `io_uring_enter`;
    /// 3. consume what each socket took from its queue, before anything can add to or cut a queue;
    /// 4. then what follows a write (a failed send closes its connection, a drained one resumes reads, interests
    ///    are updated) and the connections that write by themselves (TLS, WebSocket, a long queue): these may
    ///    queue bytes for others, which are flushed again.
    func flush(_ batch: [Connection], through ring: SendRing) {
        var start = 0
        while start < batch.count {
            stagedSends.removeAll(keepingCapacity: true)
            var end = start
            var staged = 0
            while end < batch.count {
                let connection = batch[end]
                // Flushed since it was listed (a write-readiness event writes at once), or listed twice and
                // staged already in this round: staging the same unsent bytes again would send them twice.
                guard connection.flushScheduled, !connection.flushStaged else {
                    stagedSends.append(Self.notStaged)
                    end += 1
                    continue
                }
                if let fd = connection.batchableSocket, ring.accepts(queuedBytes: connection.outbound.queuedBytes) {
                    if let send = ring.stage(&connection.outbound, to: fd) {
                        connection.flushScheduled = false
                        connection.flushStaged = true
                        stagedSends.append(send)
                        staged += 1
                    } else if staged > 0 {
                        break  // the ring is full: submit, then start the next round with this connection
                    } else {
                        stagedSends.append(Self.writesItself)
                    }
                } else {
                    stagedSends.append(Self.writesItself)
                }
                end += 1
            }
            if staged > 0 {
                if let error = ring.submit() { shared.logger.error("the send ring failed: \(error)") }
                shared.counters.flushSubmissions.add(1, ordering: .relaxed)
                shared.counters.flushRingSends.add(staged, ordering: .relaxed)
                let now = nowMillis
                for index in start..<end where stagedSends[index - start] >= 0 {
                    batch[index].consumeSent(ring.result(of: stagedSends[index - start]), nowMillis: now)
                }
            }
            for index in start..<end {
                let send = stagedSends[index - start]
                if send >= 0 {
                    batch[index].finishFlush(sent: ring.result(of: send), owner: self)
                } else if send == Self.writesItself {
                    batch[index].flush(owner: self)
                }
            }
            start = end
        }
    }

    /// `stagedSends` entries that are not a send's index: the connection is skipped, or writes by itself.
    private static let notStaged = -1
    private static let writesItself = -2
}
