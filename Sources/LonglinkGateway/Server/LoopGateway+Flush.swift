import Glibc
import LonglinkCore
import LonglinkLoop
import Synchronization

/// The flush stage through the loop's send ring: every connection with bytes pending, in one system call.
extension LoopGateway {
    /// The send ring for `mode` (nil for `.each`, or when the kernel offers no io_uring: logged once per loop).
    static func makeSendRing(_ mode: FlushMode, loop: Int, logger: Logger) -> SendRing? {
        guard mode == .ring else { return nil }
        do {
            return try SendRing()
        } catch {
            logger.warning("loop \(loop): no send ring (\(error)); each connection sends by itself (flush = each)")
            return nil
        }
    }

    /// Sends the pending bytes of `batch`: each connection whose transport sends its queue as it is, with a queue
    /// the ring takes, is gathered into the ring, and a full ring (or the end of the batch) is submitted with one
    /// `io_uring_enter`; every other connection (TLS, WebSocket, a long queue) writes by itself meanwhile.
    func flush(_ batch: [Connection], through ring: SendRing) {
        var start = 0
        while start < batch.count {
            stagedSends.removeAll(keepingCapacity: true)
            var end = start
            var staged = 0
            while end < batch.count {
                let connection = batch[end]
                // Flushed since it was listed (a write-readiness event writes at once), or listed a second time
                // after that: its bytes are written or already staged, and staging them again would send them
                // twice.
                guard connection.flushScheduled else {
                    stagedSends.append(-1)
                    end += 1
                    continue
                }
                if let fd = connection.batchableSocket, ring.accepts(connection.outbound) {
                    if let send = ring.stage(connection.outbound, to: fd) {
                        connection.flushScheduled = false
                        stagedSends.append(send)
                        staged += 1
                    } else if staged > 0 {
                        break  // the ring is full: submit, then start the next round with this connection
                    } else {
                        stagedSends.append(-1)
                        connection.flush(owner: self)
                    }
                } else {
                    stagedSends.append(-1)
                    connection.flush(owner: self)
                }
                end += 1
            }
            if staged > 0 {
                if let error = ring.submit() { shared.logger.error("the send ring failed: \(error)") }
                shared.counters.flushSubmissions.add(1, ordering: .relaxed)
                shared.counters.flushRingSends.add(staged, ordering: .relaxed)
            }
            for index in start..<end {
                let send = stagedSends[index - start]
                if send >= 0 { batch[index].finishFlush(sent: ring.result(of: send), owner: self) }
            }
            start = end
        }
    }
}

/// How each loop sends its connections' pending bytes before it sleeps (the `flush` toggle).
public enum FlushMode: String, Sendable, Hashable, CaseIterable {
    /// Gathered into the loop's send ring and sent with one `io_uring_enter` per loop iteration (`SendRing`);
    /// where the kernel offers no io_uring the loop logs it and sends per connection.
    case ring
    /// One `send` (or gathered `sendmsg`) per connection.
    case each
}
