import Glibc
import LonglinkCore

/// A connection's pending output: a FIFO of immutable byte chunks, flushed with gathered writes.
///
/// Chunks are `[UInt8]`, which share storage when copied, so a push encoded once is referenced by every
/// subscriber's queue without copying its bytes (centrifuge's shared payloads). The queue remembers how much of the
/// first chunk a short write already sent, and `queuedBytes` is what a slow-consumer limit compares against.
///
/// Small frames meant for one connection alone (pongs, errors, publish results) go in with `appendReply`: they
/// are gathered into one private chunk (Redis's reply buffer), so a burst of three-byte pongs costs its bytes and
/// one iovec per few KiB, not an allocation and an iovec each; what the queue holds is then close to what
/// `queuedBytes` says.
///
/// `write(to:)` hands up to `maxChunksPerWrite` chunks to one `sendmsg` (a `writev` with `MSG_NOSIGNAL`, so a dead
/// peer is `EPIPE` instead of a process-killing `SIGPIPE`). The iovec array lives in a stack temporary, so a
/// flush allocates nothing on the heap. One chunk is held without an array (`ChunkList`); an array, once a second
/// chunk made one, keeps its capacity across drains.
public struct OutboundQueue: Sendable {
    /// At most this many chunks go to one system call (well below Linux's `IOV_MAX` of 1024; 64 iovecs fit in
    /// 1 KiB of stack).
    public static let maxChunksPerWrite = 64

    // The stored properties are ordered and sized so the queue is 32 bytes (`tailIsPrivate` rides in the top bit
    // of the head index): every connection holds one inline, and with a 33rd byte the `Connection` object fell in
    // the next 16-byte malloc size class. Idle memory per connection is a budget (issue 19).
    private var chunks = ChunkList()
    /// The last private reply chunk, emptied with its storage kept, once everything was written: the next reply
    /// reuses it instead of allocating (a publisher gets one result per publish). Freed by
    /// `releaseStorageIfEmpty` with the rest.
    private var spareReply: [UInt8] = []
    /// Bytes queued and not yet written.
    public private(set) var queuedBytes = 0
    /// `head` in the low 31 bits, `tailIsPrivate` in the top bit.
    private var storedHeadAndFlag: UInt32 = 0
    private var storedHeadOffset: Int32 = 0

    private static let privateTailBit: UInt32 = 1 << 31

    /// Whether the last chunk is the queue's own (filled by `appendReply`), so more replies may be added to it.
    private var tailIsPrivate: Bool {
        get { storedHeadAndFlag & Self.privateTailBit != 0 }
        set { storedHeadAndFlag = newValue ? storedHeadAndFlag | Self.privateTailBit : storedHeadAndFlag & ~Self.privateTailBit }
    }

    /// Index of the first chunk not yet fully written (at most `chunks.count`, far below 2³¹; a larger value traps).
    private var head: Int {
        get { Int(storedHeadAndFlag & ~Self.privateTailBit) }
        set {
            precondition(newValue < Int(Self.privateTailBit), "outbound queue head \(newValue) out of range")
            storedHeadAndFlag = storedHeadAndFlag & Self.privateTailBit | UInt32(newValue)
        }
    }
    /// Bytes of `chunks[head]` already written by an earlier short write (below a chunk's size, at most the
    /// outbound limit).
    private var headOffset: Int {
        get { Int(storedHeadOffset) }
        set { storedHeadOffset = Int32(newValue) }
    }

    /// Replies are gathered into one private chunk while it stays at most this size.
    public static let replyChunkCapacity = 4096

    /// An empty queue.
    public init() {}

    /// True when everything queued has been written.
    public var isEmpty: Bool { queuedBytes == 0 }

    /// Chunks not yet fully written.
    public var chunkCount: Int { chunks.count - head }

    /// Queues a chunk (shared, not copied). Empty chunks are ignored.
    public mutating func append(_ chunk: [UInt8]) {
        guard !chunk.isEmpty else { return }
        chunks.append(chunk)
        queuedBytes += chunk.count
        tailIsPrivate = false
    }

    /// Queues a frame for this connection alone. A small one is added to the private last chunk while that
    /// stays within `replyChunkCapacity` (bytes already in it, even partly written, do not move); otherwise
    /// `chunk` becomes the new last chunk and later replies may be added to it (pass an array nobody else holds,
    /// such as a freshly encoded frame: a shared one would be copied on the first addition).
    public mutating func appendReply(_ chunk: [UInt8]) {
        guard !chunk.isEmpty else { return }
        let last = chunks.count - 1
        if tailIsPrivate && last >= head && chunks.size(of: last) + chunk.count <= Self.replyChunkCapacity {
            chunks.modifyLast { $0.append(contentsOf: chunk) }
        } else {
            chunks.append(chunk)
            tailIsPrivate = true
        }
        queuedBytes += chunk.count
    }

    /// Queues a reply of at most `maxCount` bytes written by `write`, which appends them to the array it is given:
    /// the queue's private last chunk when it has room (no array for the reply at all), else a new chunk that
    /// later replies may join. `maxCount` is what `write` is expected to append at most (appending more only lets
    /// the chunk outgrow `replyChunkCapacity`); it must not remove bytes. When it returns false, what it appended
    /// is dropped and nothing is queued. (Not generic over an error type: a generic method of this module is not
    /// specialised in its callers' modules, and that cost more than the reply's own array.)
    @discardableResult
    public mutating func appendReply(maxCount: Int, _ write: (inout [UInt8]) -> Bool) -> Bool {
        let last = chunks.count - 1
        if tailIsPrivate && last >= head && chunks.size(of: last) + maxCount <= Self.replyChunkCapacity {
            let added: Int? = chunks.modifyLast { bytes in
                let before = bytes.count
                guard write(&bytes) else {
                    bytes.removeLast(bytes.count - before)
                    return nil
                }
                return bytes.count - before
            }
            guard let added else { return false }
            queuedBytes += added
            return true
        }
        var chunk: [UInt8] = []
        if spareReply.capacity >= maxCount {
            swap(&chunk, &spareReply)
        } else {
            chunk.reserveCapacity(Swift.max(maxCount, 256))
        }
        guard write(&chunk) else { return false }
        guard !chunk.isEmpty else { return true }
        chunks.append(chunk)
        tailIsPrivate = true
        queuedBytes += chunk.count
        return true
    }

    /// Marks `count` bytes from the front as written (for transports that write by other means, e.g. TLS).
    public mutating func consume(_ count: Int) {
        precondition(count >= 0 && count <= queuedBytes, "consumed \(count) of \(queuedBytes) queued bytes")
        // Everything written (the usual case): empty the queue without walking its chunks.
        if count == queuedBytes && count > 0 {
            emptied()
            return
        }
        queuedBytes -= count
        var remaining = count
        while remaining > 0 {
            let available = chunks.size(of: head) - headOffset
            if remaining < available {
                headOffset += remaining
                return
            }
            remaining -= available
            head += 1
            headOffset = 0
        }
        if head == chunks.count {
            emptied()
        } else if head >= 32 && head * 2 >= chunks.count {
            chunks.removeFirst(head)
            head = 0
        }
    }

    /// Everything queued was written: drops the chunks (keeping the array's capacity) and keeps the private reply
    /// chunk's storage as the spare.
    private mutating func emptied() {
        queuedBytes = 0
        headOffset = 0
        if tailIsPrivate, var last = chunks.popLast(), last.capacity <= Self.replyChunkCapacity {
            last.removeAll(keepingCapacity: true)
            spareReply = last
        }
        chunks.removeAllKeepingStorage()
        head = 0
        tailIsPrivate = false
    }

    /// Calls `body` with the unwritten bytes of the first chunk; nil when the queue is empty.
    public func withFirstChunk<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R? {
        guard head < chunks.count else { return nil }
        let offset = headOffset
        let result: Result<R, E> = chunks.withBytes(of: head) { raw in
            do throws(E) {
                return .success(try body(UnsafeRawBufferPointer(rebasing: raw[offset...])))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Frees the chunk array's storage when nothing is queued, so an idle connection keeps no buffer. Call it
    /// from housekeeping, not after every flush (a busy connection reuses the capacity).
    public mutating func releaseStorageIfEmpty() {
        spareReply = []
        guard queuedBytes == 0, chunks.hasArray else { return }
        chunks.releaseStorage()
        head = 0
        headOffset = 0
        tailIsPrivate = false
    }

    /// Copies the unwritten bytes from the front of the queue (across chunks) into `destination`, up to its size,
    /// without consuming them; returns the count. For transports that must hand one contiguous buffer to a library
    /// (TLS coalesces small frames into one record this way), then `consume` what it took.
    public func copyFront(into destination: UnsafeMutableRawBufferPointer) -> Int {
        var copied = 0
        var index = head
        var offset = headOffset
        while index < chunks.count && copied < destination.count {
            let take = chunks.withBytes(of: index) { raw -> Int in
                let count = Swift.min(raw.count - offset, destination.count - copied)
                (destination.baseAddress! + copied).copyMemory(from: raw.baseAddress! + offset, byteCount: count)
                return count
            }
            copied += take
            index += 1
            offset = 0
        }
        return copied
    }

    /// Drops everything queued (the connection is closing).
    public mutating func removeAll() {
        chunks.removeAllKeepingStorage()
        head = 0
        headOffset = 0
        queuedBytes = 0
        tailIsPrivate = false
    }

    /// Drops every chunk no write has started on, and keeps the unwritten rest of a partly written first chunk,
    /// so a frame queued next (a disconnect) starts on a frame boundary for the peer.
    public mutating func removeUnstarted() {
        guard headOffset > 0 else {
            removeAll()
            return
        }
        chunks.removeFrom(head + 1)
        queuedBytes = chunks.size(of: head) - headOffset
        tailIsPrivate = false
    }

    /// Writes as much as the socket takes in one gathered `sendmsg` of up to `maxChunksPerWrite` chunks (one
    /// chunk, the usual case of a subscriber that keeps up: a plain `send`, with no iovec set up), and consumes
    /// what was written. `.processed(n)` may be a short write; check `isEmpty` to know whether the queue drained,
    /// and ask for `.write` readiness only if it did not.
    public mutating func write(to fd: CInt) throws(IOError) -> IOResult<Int> {
        guard !isEmpty else { return .processed(0) }
        let count = Swift.min(chunkCount, Self.maxChunksPerWrite)
        while true {
            let (written, code) = count == 1
                ? sendFirst(fd)
                : withUnsafeTemporaryAllocation(of: iovec.self, capacity: count) { iovecs in gather(0, count, iovecs, fd) }
            if written >= 0 {
                // A write that took everything (the usual case) empties the queue without walking its chunks.
                if written == queuedBytes {
                    emptied()
                } else {
                    consume(written)
                }
                return .processed(written)
            }
            switch code {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            case EBADF, EFAULT: preconditionFailure("sendmsg on fd \(fd): \(IOError(errno: code, function: "sendmsg"))")
            default: throw IOError(errno: code, function: "sendmsg")
            }
        }
    }

    /// Copies the first unwritten bytes, at most `destination.count`, into `destination` without consuming them:
    /// what a batched send (`SendRing`) sends, after which `consume(_:)` takes what the socket accepted. Returns
    /// the number of bytes copied.
    public func copyUnwritten(into destination: UnsafeMutableRawBufferPointer) -> Int {
        guard let base = destination.baseAddress else { return 0 }
        var copied = 0
        var index = head
        var skip = headOffset
        while index < chunks.count && copied < destination.count {
            copied += chunks.withBytes(of: index) { raw in
                let count = Swift.min(raw.count - skip, destination.count - copied)
                guard count > 0, let start = raw.baseAddress else { return 0 }
                (base + copied).copyMemory(from: start + skip, byteCount: count)
                return count
            }
            skip = 0
            index += 1
        }
        return copied
    }

    /// Sends the unwritten bytes of the first chunk alone (`send` with `MSG_NOSIGNAL`, as `gather`'s `sendmsg`).
    private func sendFirst(_ fd: CInt) -> (Int, CInt) {
        let skip = headOffset
        return chunks.withBytes(of: head) { raw in
            let result = send(fd, raw.baseAddress! + skip, raw.count - skip, Socket.noSignalFlag)
            return (result, result < 0 ? errno : 0)
        }
    }

    /// Fills `iovecs[index...]` from the chunks and sends them. Each chunk's bytes are only valid inside its
    /// `withUnsafeBytes`, so the closures nest one level per chunk and the `sendmsg` happens at the innermost level
    /// (at most `maxChunksPerWrite` deep; the closures are non-escaping and live on the stack).
    private func gather(
        _ index: Int,
        _ count: Int,
        _ iovecs: UnsafeMutableBufferPointer<iovec>,
        _ fd: CInt
    ) -> (Int, CInt) {
        if index == count {
            var message = msghdr()
            message.msg_iov = iovecs.baseAddress
            message.msg_iovlen = count
            let result = sendmsg(fd, &message, Socket.noSignalFlag)
            return (result, result < 0 ? errno : 0)
        }
        let skip = index == 0 ? headOffset : 0
        return chunks.withBytes(of: head + index) { raw in
            iovecs[index] = iovec(iov_base: UnsafeMutableRawPointer(mutating: raw.baseAddress! + skip), iov_len: raw.count - skip)
            return gather(index + 1, count, iovecs, fd)
        }
    }
}
