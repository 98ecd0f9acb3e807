import Glibc
import LonglinkCore
import LonglinkLoop
import Synchronization

/// One client connection on one loop: its transport, its inbound bytes, its outbound queue and its
/// `PeerStateMachine`. Loop-confined. It turns readiness into frames for the peer, and the peer's actions into
/// bytes, hub changes and Store requests (through its `LoopGateway`).
///
/// Reads are level-triggered with a byte budget per event, so one chatty client cannot starve the others.
/// Writes are queued and flushed by the loop's before-sleep hook; `.write` interest is asked for only after a
/// short write (Redis's write path).
///
/// Every queued byte counts against the outbound limit, whatever the frame kind (see `Connection+Backpressure`):
/// a frame that would take the queue past it cuts the connection with `slow`, and a peer that pipelines
/// requests without reading the answers stops being read while its queue is past the high-water mark.
final class Connection: SelectorHandler {
    // The stored properties are ordered and sized so the object is 344 bytes, a 352-byte malloc block (it was
    // 432, a 448-byte block): the registration is its generation alone (the fd is the transport's), the one-byte
    // flags and the 32-bit publish count share one 8-byte word after it, and the 32-byte outbound queue comes last.
    // Idle memory per connection is a budget (issue 19): mind the order when adding a field.

    /// Process-unique id: a per-loop serial number times 64 plus the loop id, so it stays small.
    let id: UInt64
    /// The loop's gateway, which holds this connection. (Hot paths read it once into a local, or are handed it:
    /// each access through the `unowned` reference costs a strong retain and a release.)
    unowned let owner: LoopGateway
    let transport: any Transport
    /// The peer's IP address alone (the per-address admission key; an IPv4 text fits inline, no allocation).
    let sourceAddress: String
    /// The loop registration's generation; 0 while not registered (a registration's is never 0).
    private var registrationGeneration: UInt32 = 0
    /// Waiting for the next iteration's handshake budget (registered with no interest meanwhile).
    var handshakeDeferred = false
    /// Whether the connection is in the loop's pending-flush list, and whether its bytes are staged in the loop's
    /// send ring and not sent yet (one byte for both).
    private var flushMarks: FlushMarks = []
    /// Close once the outbound queue is flushed (a disconnect frame is queued).
    private var closeAfterFlush = false
    private(set) var isClosed = false
    /// The interest last registered by `updateInterest` (`noInterestRegistered` before its first call): a flush
    /// that leaves the interest as it was makes no `reregister` call. One byte, among the flags.
    private var registeredInterest = Connection.noInterestRegistered
    /// The transport's name in the admin list and the connection gauge (`tcp`, `tls`, `ws`, `wss`).
    var transportName = TransportName.tcp
    /// Back-pressure: frames are neither read nor processed until the queue drains (see `Connection+Backpressure`).
    var readsPaused = false
    /// A loop-local job will resume the paused reads.
    var resumeScheduled = false
    private var storedPendingPublishes: Int32 = 0
    var peer: PeerStateMachine
    private var inbound = ByteBuffer()
    /// Under the `coalesce` policy: the latest record per route held back while the queue is over the limit.
    private var coalesced: [Route: OrderChangeRecord] = [:]
    /// Monotonic ms of the last inbound byte (or of the accept), for inspection.
    private(set) var lastActivityMillis: UInt64 = 0
    /// Monotonic ms when the peer last took bytes from the queue, or when reads paused (the stall check).
    var lastDrainMillis: UInt64 = 0
    var outbound = OutboundQueue()
    /// Whether the connection is in the loop's pending-flush list.
    var flushScheduled: Bool {
        get { flushMarks.contains(.scheduled) }
        set { if newValue { flushMarks.insert(.scheduled) } else { flushMarks.remove(.scheduled) } }
    }
    /// Whether the loop's send ring holds a copy of this connection's first bytes that it has not sent yet: they
    /// must not be staged a second time, nor written directly, before `consumeSent` takes what was sent.
    var flushStaged: Bool {
        get { flushMarks.contains(.staged) }
        set { if newValue { flushMarks.insert(.staged) } else { flushMarks.remove(.staged) } }
    }
    private struct FlushMarks: OptionSet {
        let rawValue: UInt8
        static let scheduled = FlushMarks(rawValue: 1)
        static let staged = FlushMarks(rawValue: 2)
    }
    /// The loop registration, nil while not registered.
    var registration: RegistrationID? {
        get { registrationGeneration == 0 ? nil : RegistrationID(fd: transport.fd, generation: registrationGeneration) }
        set {
            precondition(newValue.map { $0.fd == transport.fd && $0.generation != 0 } ?? true, "registration of another fd")
            registrationGeneration = newValue?.generation ?? 0
        }
    }
    /// Whether the transport is TLS (for inspection): its name says it, so no byte of its own is stored.
    var isTLS: Bool { transportName == .tls || transportName == .wss }
    /// No interest was registered yet (a value `updateInterest` never computes: every bit set).
    private static let noInterestRegistered = SelectorEvent(rawValue: 0xFF)
    /// The server's id for this client, as sent in `connected` (`c` + id: short enough to be stored inline).
    var clientID: String { peer.clientID }
    /// The peer's address, for inspection and logs (asked of the kernel when needed, not stored).
    var remoteAddress: String { (try? Socket.peerAddress(transport.fd).description) ?? "unknown" }
    /// Publishes handed to the Store and not answered yet (their answers will be queued); at most
    /// `LoopGateway.maxPendingPublishes`, stored in 32 bits.
    var pendingPublishes: Int {
        get { Int(storedPendingPublishes) }
        set { storedPendingPublishes = Int32(newValue) }
    }

    init(id: UInt64, sourceAddress: String, transport: any Transport, owner: LoopGateway, nowMillis: UInt64) {
        self.id = id
        self.sourceAddress = sourceAddress
        self.transport = transport
        self.owner = owner
        self.peer = PeerStateMachine(clientID: "c\(id)", context: owner.shared.peerContext, nowMillis: nowMillis)
        self.lastActivityMillis = owner.nowMillis
    }

    // MARK: Readiness

    func handleEvent(_ event: SelectorEvent) {
        guard !isClosed else { return }
        if peer.phase == .accepted {
            startHandshake()
            return
        }
        if readsPaused && !event.isDisjoint(with: [.reset, .error]) && outbound.isEmpty {
            // Nothing is read or written now, so no system call would notice the hang-up that epoll keeps reporting.
            close(reason: "connection reset while reads were paused")
            return
        }
        // A TLS read may be waiting for writability and a TLS write for readability: while the transport waits
        // for anything, every readiness retries both.
        let transportWaits = !transport.interest.isEmpty
        if transportWaits || !event.isDisjoint(with: [.read, .readEOF, .reset, .error]) {
            readAvailable()
        }
        if (transportWaits || event.contains(.write)) && !isClosed {
            flush()
        }
    }

    /// One handshake step if this iteration's budget allows, otherwise wait for the next iteration's.
    func startHandshake() {
        guard !isClosed else { return }
        if owner.takeHandshakeToken() {
            handshakeDeferred = false
            advanceHandshake()
        } else if !handshakeDeferred {
            handshakeDeferred = true
            owner.shared.counters.handshakesDeferred.add(1, ordering: .relaxed)
            owner.deferredHandshakes.append(self)
            updateInterest()
        }
    }

    /// Drives the transport's own set-up (instant for TCP, a few round trips for TLS).
    private func advanceHandshake() {
        do {
            switch try transport.handshake() {
            case .wouldBlock:
                updateInterest()
            case .processed:
                if let resumed = transport.tlsSessionResumed { owner.shared.counters.tlsHandshakeFinished(resumed: resumed) }
                peer.transportReady(nowMillis: owner.wallMillis)
                updateInterest()
            }
        } catch {
            close(reason: "transport handshake failed: \(error)")
        }
    }

    func readAvailable() {
        let owner = self.owner
        var total = 0
        let budget = owner.readBudget
        // Read into the loop's spare buffer unless this connection holds a partial frame (see `releaseIdleBuffer`).
        if inbound.capacity == 0 { swap(&inbound, &owner.spareInbound) }
        reading: while total < budget && !isClosed && !readsPaused && peer.phase != .draining {
            let result: IOResult<Int>
            do {
                result = try transport.read(into: &inbound)
            } catch {
                close(reason: "read failed: \(error)")
                return
            }
            switch result {
            case .wouldBlock:
                releaseIdleBuffer(owner: owner)
                return
            case .processed(0):
                close(reason: "peer closed the connection")
                return
            case .processed(let count):
                total += count
                lastActivityMillis = owner.nowMillis
                processFrames(owner: owner)
                // A short read emptied the socket: epoll (level-triggered) reports the next bytes; reading again
                // now would only return EAGAIN.
                if transport.lastReadDrained { break reading }
            }
        }
        releaseIdleBuffer(owner: owner)
    }

    /// An idle connection keeps no inbound storage: memory per idle connection is what the gateway scales on.
    /// Drained storage goes back to the loop as its spare (unless it grew past `LoopGateway.spareInboundLimit`),
    /// so the next read on this loop does not allocate and zero a fresh read buffer.
    /// `owner` is this connection's loop gateway, handed in by the read path (each access through the `unowned`
    /// property costs a strong retain and a release).
    private func releaseIdleBuffer(owner: LoopGateway) {
        guard inbound.readableBytes == 0 && inbound.capacity > 0 else { return }
        if inbound.capacity <= LoopGateway.spareInboundLimit && owner.spareInbound.capacity == 0 {
            inbound.clear()
            swap(&inbound, &owner.spareInbound)
        } else {
            inbound = ByteBuffer()
        }
    }

    func processFrames() {
        processFrames(owner: owner)
    }

    /// `processFrames()` with this connection's loop gateway handed in (see `releaseIdleBuffer(owner:)`).
    private func processFrames(owner: LoopGateway) {
        let shared = owner.shared
        let reader = owner.frameReader
        while !isClosed && peer.phase != .draining {
            if answersBacklogged(on: owner) {
                pauseReads()
                return
            }
            let frame: ClientFrame?
            do {
                // Through `shared`: a copy of the codec existential cost a copy and a destroy per read.
                frame = try shared.codec.decodeNextClientFrame(from: &inbound, reader: reader)
            } catch {
                owner.shared.counters.protocolErrors.add(1, ordering: .relaxed)
                perform(peer.decodeFailed(error))
                return
            }
            guard let frame else { return }
            if case .publish(let request) = frame {
                // The hot frame: a publish bound for the Store builds no action list, and its change is made in
                // the loop's queue.
                if let actions = owner.publish(request, from: self, nowMillis: owner.wallMillis) { perform(actions) }
                continue
            }
            perform(peer.receive(frame, nowMillis: owner.wallMillis))
        }
    }

    // MARK: Actions

    /// Carries out what the peer decided, in order.
    func perform(_ actions: [PeerAction]) {
        for action in actions {
            switch action {
            case .send(let frame):
                if case .connected = frame {
                    owner.shared.logger.debug(
                        "client connected",
                        [("conn", clientID), ("user", peer.principal?.userID ?? "-"), ("client", peer.clientName),
                         ("address", remoteAddress)]
                    )
                }
                send(frame)
            case .subscribe(let route, let since, let requestID):
                owner.subscribe(self, to: route, since: since, requestID: requestID)
            case .unsubscribe(let route):
                owner.unsubscribe(self, from: route)
            case .publish(let change, let requestID, let wantsReceipts):
                owner.publish(change, from: self, requestID: requestID, wantsReceipts: wantsReceipts)
            case .acknowledged(let route, let offset):
                owner.acknowledged(route, offset: offset, by: self)
            case .presence(let route, let requestID):
                owner.presence(of: route, for: self, requestID: requestID)
            case .close(let disconnect):
                guard !closeAfterFlush else { continue }  // already closing (e.g. cut as slow by an earlier send)
                owner.shared.counters.recordDisconnect(disconnect.code)
                owner.shared.logger.debug(
                    "closing connection: \(disconnect)",
                    [("conn", clientID), ("user", peer.principal?.userID ?? "-")]
                )
                coalesced.removeAll()
                queueDisconnect(disconnect)
                closeAfterFlush = true
                updateInterest()
                owner.scheduleFlush(self)
                owner.scheduleForcedClose(self)
            }
        }
    }

    /// Encodes a control frame for this connection alone (in a message of its own on a message transport).
    func send(_ frame: ServerFrame) {
        guard let bytes = owner.encode(frame) else {
            close(reason: "could not encode \(frame)")
            return
        }
        enqueue(transport.messageFramer?.message(carrying: bytes) ?? bytes, reply: true)
    }

    /// Answers an accepted publish. On a byte-stream transport the result is written straight into the reply
    /// chunk by the codec (no frame value, no array of its own: issue 19); a message transport (WebSocket) wraps
    /// it through `send`, and so does a queue near its limit (`send` cuts the connection past it). `owner` is this
    /// connection's loop gateway, the caller (no access through the `unowned` property).
    func sendPublishAccepted(
        requestID: UInt32,
        position: StreamPosition,
        timestampMillis: UInt64,
        deduplicated: Bool,
        owner: LoopGateway
    ) {
        guard !isClosed, !closeAfterFlush, peer.answersPublishes else { return }
        let room = Self.acceptedResultRoom
        guard transport.messageFramer == nil, outbound.queuedBytes + room <= owner.outboundLimit else {
            let result = PublishResult.accepted(
                requestID: requestID, position: position, timestampMillis: timestampMillis, deduplicated: deduplicated)
            send(.publishResult(result))
            return
        }
        // The shared object is captured, not its codec: copying the existential out cost a copy and a destroy.
        let shared = owner.shared
        var failure: FrameError?
        let written = outbound.appendReply(maxCount: room) { bytes in
            do throws(FrameError) {
                try shared.codec.appendAcceptedPublishResult(
                    requestID: requestID, position: position, timestampMillis: timestampMillis,
                    deduplicated: deduplicated, to: &bytes
                )
                return true
            } catch {
                failure = error
                return false
            }
        }
        guard written else {
            close(reason: "could not encode a publish result: \(failure.map { "\($0)" } ?? "unknown")")
            return
        }
        if !flushScheduled { owner.scheduleFlush(self) }
    }

    /// Room an accepted publish result takes at most (43 bytes in protobuf, with margin).
    private static let acceptedResultRoom = 64

    /// Queues the disconnect frame, past the limit if need be (after dropping what no write has started on). A
    /// message transport closes in its own protocol too, right after it (WebSocket: a close frame with the number).
    private func queueDisconnect(_ disconnect: Disconnect) {
        guard !isClosed, !closeAfterFlush, let frame = owner.encode(.disconnect(disconnect)) else { return }
        var bytes = frame
        if let framer = transport.messageFramer {
            bytes = framer.message(carrying: frame) + framer.closeMessage(code: disconnect.code.rawValue, reason: disconnect.reason)
        }
        if outbound.queuedBytes + bytes.count > owner.outboundLimit { outbound.removeUnstarted() }
        outbound.appendReply(bytes)
        if !flushScheduled { owner.scheduleFlush(self) }
    }

    /// Queues a record's shared push bytes (encoded once per record per loop, by the first subscriber that takes
    /// it: `push` carries them to the next subscriber). Returns whether the bytes were queued (the caller counts
    /// pushes once per record, not per subscriber: process-wide atomics per subscriber would be contended cache
    /// lines on the fan-out path).
    /// `via` is the subscription that takes it when that is not `route` itself (a line-wide route). `owner` is
    /// this connection's loop gateway, passed in by the fan-out that is running on it (each access through the
    /// `unowned` property costs a strong retain and a release, per subscriber).
    func deliver(
        _ record: OrderChangeRecord,
        on route: Route,
        via subscription: Route? = nil,
        push: inout LoopGateway.PushBytes,
        owner: LoopGateway
    ) -> Bool {
        guard case .send = peer.deliver(record, on: subscription ?? route) else { return false }
        let framer = transport.messageFramer
        let bytes: [UInt8]
        if framer == nil, let frame = push.frame {
            bytes = frame  // the common case: a byte stream, and the record's frame made already
        } else {
            guard let made = owner.pushBytes(record, on: route, &push, framer: framer) else { return false }
            bytes = made
        }
        // Under `coalesce`, pushes use the queue up to the high-water mark; the rest is room for replies and
        // pings, so a coalescing subscriber is never cut for a pong on top of its pushes.
        if owner.coalescesSlowReaders && (!coalesced.isEmpty || outbound.queuedBytes + bytes.count > owner.outboundHighWater) {
            owner.shared.counters.coalescedRecords.add(1, ordering: .relaxed)
            coalesced[route] = record
            updateInterest(owner: owner)
            return false
        }
        return enqueue(bytes, reply: false, owner: owner)
    }

    /// Queues bytes (a reply into the queue's private chunk, a shared push by reference), or cuts the connection
    /// with `slow` when they would take the queue past the outbound limit. One stalled reader never delays
    /// anyone else, and never costs more than the limit.
    @discardableResult
    private func enqueue(_ bytes: [UInt8], reply: Bool) -> Bool {
        enqueue(bytes, reply: reply, owner: owner)
    }

    /// `enqueue(_:reply:)` with this connection's loop gateway passed in (see `deliver`).
    private func enqueue(_ bytes: [UInt8], reply: Bool, owner: LoopGateway) -> Bool {
        guard !isClosed, !closeAfterFlush else { return false }
        if outbound.queuedBytes + bytes.count > owner.outboundLimit {
            cutSlow(because: "outbound queue above \(owner.outboundLimit) bytes")
            return false
        }
        if reply {
            outbound.appendReply(bytes)
        } else {
            outbound.append(bytes)
        }
        if !flushScheduled { owner.scheduleFlush(self) }
        return true
    }

    /// Sends the numbered `slow` disconnect (after the unwritten rest of a partly written frame) and closes.
    func cutSlow(because reason: String) {
        guard !isClosed, !closeAfterFlush else { return }
        owner.shared.counters.slowDisconnects.add(1, ordering: .relaxed)
        outbound.removeUnstarted()
        coalesced.removeAll()
        perform(peer.disconnect(.slow, reason: reason))
    }

    /// Once the queue has drained, sends each route's newest held-back record marked `skippedBefore`, up to the
    /// high-water mark (the rest waits for the next drain).
    private func releaseCoalesced() {
        guard !coalesced.isEmpty else { return }
        let held = coalesced.sorted { $0.key < $1.key }
        coalesced.removeAll()
        for (index, (route, record)) in held.enumerated() {
            guard let frame = owner.encode(.push(Push(route: route, record: record, skippedBefore: true))) else { continue }
            let bytes = transport.messageFramer?.message(carrying: frame) ?? frame
            if !outbound.isEmpty && outbound.queuedBytes + bytes.count > owner.outboundHighWater {
                for (route, record) in held[index...] { coalesced[route] = record }
                return
            }
            guard enqueue(bytes, reply: true) else { return }
        }
    }

    // MARK: Writing and closing

    /// Writes as much of the queue as the socket takes; asks for `.write` only after a short write.
    func flush() { flush(owner: owner) }

    /// `flush()` with this connection's loop gateway passed in (the before-sleep flush of every pending
    /// connection: see `deliver`).
    func flush(owner: LoopGateway) {
        flushScheduled = false
        // Its first bytes are staged in the loop's send ring: writing them here too would send them twice.
        guard !isClosed, !flushStaged else { return }
        if !outbound.isEmpty {
            let before = outbound.queuedBytes
            do {
                _ = try transport.write(&outbound)
            } catch {
                close(reason: "write failed: \(error)")
                return
            }
            // The stall check reads it only while reads are paused (and pausing sets it).
            if readsPaused && outbound.queuedBytes < before { lastDrainMillis = owner.nowMillis }
        }
        afterFlush(owner: owner)
    }

    /// The socket the loop's send ring may send this connection's pending bytes to (see `LoopGateway+Flush`):
    /// nil when closed, when nothing is queued, or when its transport writes its own bytes.
    var batchableSocket: CInt? {
        guard !isClosed, !outbound.isEmpty else { return nil }
        return transport.batchableSocket
    }

    /// Takes from the queue what the loop's send ring sent of its front (`sent`: bytes, or the negated errno),
    /// and nothing else: the first half of ending a ring flush, done for every connection of a submission before
    /// any of them runs what follows a write (`finishFlush`), which may queue bytes for the others or cut them.
    func consumeSent(_ sent: Int32, nowMillis: UInt64) {
        flushStaged = false
        guard !isClosed, sent > 0 else { return }
        outbound.consume(Int(sent))
        // The stall check reads it only while reads are paused (and pausing sets it).
        if readsPaused { lastDrainMillis = nowMillis }
    }

    /// The second half of ending a ring flush (after `consumeSent`): `sent` was the send's result. `EAGAIN`: the
    /// socket is full, the bytes stay queued and `.write` readiness is asked for, as after a short write; any other
    /// error closes the connection, as a failed `write` does.
    func finishFlush(sent: Int32, owner: LoopGateway) {
        guard !isClosed else { return }
        if sent < 0 && sent != -EAGAIN && sent != -EWOULDBLOCK && sent != -EINTR {
            close(reason: "write failed: \(IOError(errno: -sent, function: "send"))")
            return
        }
        afterFlush(owner: owner)
    }

    /// After bytes were written: what an emptied (or still full) queue means for the connection.
    private func afterFlush(owner: LoopGateway) {
        if outbound.isEmpty {
            if !coalesced.isEmpty { releaseCoalesced() }
            if closeAfterFlush && outbound.isEmpty {
                close(reason: "disconnect sent")
                return
            }
        }
        if readsPaused && !closeAfterFlush { resumeReadsIfDrained() }
        updateInterest(owner: owner)
    }

    /// Registers exactly what is needed now: `.read` while taking input, `.write` while bytes wait, plus what the
    /// transport itself needs.
    func updateInterest() { updateInterest(owner: owner) }

    /// `updateInterest()` with this connection's loop gateway passed in (see `deliver`). Asks the loop only when
    /// the interest differs from the one last registered.
    func updateInterest(owner: LoopGateway) {
        guard let registration, !isClosed else { return }
        var interest: SelectorEvent = transport.interest
        if handshakeDeferred { interest = [] }
        if peer.phase != .draining && peer.phase != .accepted && !readsPaused { interest.insert(.read) }
        if peer.phase == .accepted && !handshakeDeferred && interest.isEmpty { interest.insert(.read) }
        if !outbound.isEmpty || !coalesced.isEmpty { interest.insert(.write) }
        guard interest != registeredInterest else { return }
        do {
            try owner.context.reregister(registration, interest: interest)
            registeredInterest = interest
        } catch {
            close(reason: "epoll_ctl failed: \(error)")
        }
    }

    /// Closes now: leaves the hub, the loop and the process's connection count.
    func close(reason: String) {
        guard !isClosed else { return }
        isClosed = true
        for route in peer.subscribedRoutes { owner.unsubscribe(self, from: route) }
        peer.transportClosed()
        if let registration { owner.context.deregister(registration) }
        registration = nil
        transport.close()
        outbound.removeAll()
        coalesced.removeAll()
        inbound = ByteBuffer()
        owner.connectionClosed(self, reason: reason)
    }

    /// Bytes waiting to be written (for inspection and slow-consumer tests).
    var queuedBytes: Int { outbound.queuedBytes }
}

@available(*, unavailable)
extension Connection: Sendable {}
