public import LonglinkCore
public import LonglinkLoop

/// `Transport` for WebSocket (RFC 6455, server side): a decorator over the byte stream of another transport
/// (`PlainTransport` for `ws`, `TLSTransport` for `wss`), like the TLS transport decorates the socket.
///
/// `handshake()` first finishes the inner transport's own set-up, then reads the HTTP upgrade request (bounded
/// by the endpoint's head limit; the gateway's handshake timeout bounds its time), checks it and writes `101`,
/// or writes the refusal and fails. After that:
///
/// - `read` decodes client frames in place in the caller's buffer (`WebSocketFrameDecoder`): what remains is the
///   payload of binary messages, Longlink's frame stream. Pings are answered with pongs; a close frame is
///   answered with a close frame and then reads as end of stream; a broken rule sends a close frame with its code
///   (1002, 1003, 1007, 1009) and fails the read.
/// - `write` passes the queue through: the connection queued whole binary messages (`messageFramer`), so a push
///   framed once is shared by every subscriber. The transport's own control frames (pongs, close replies) go out
///   only between messages: when the connection's queue is empty (a TLS write that would block must be retried
///   with the same bytes, so nothing may be slipped in front of a partly written queue).
public final class WebSocketTransport: Transport {
    private enum State: UInt8 { case innerHandshake, readingRequest, writingResponse, open, peerClosed, closed }

    /// What only the handshake, a pending control frame or early frame bytes need: allocated while they exist,
    /// so an idle open connection carries none of it.
    private final class Pending {
        /// The request head read so far (1 KiB first: a request is a few hundred bytes, and reads into an
        /// emptier buffer would ask for 16 KiB per handshake).
        var request = ByteBuffer(capacity: 1024)
        /// The `101` (or refusal) not yet written.
        var response = OutboundQueue()
        /// Frame bytes the client sent right behind its request head, decoded by the first `read`.
        var early: [UInt8] = []
        /// Control frames (pongs, close replies) waiting for a gap between messages.
        var control = OutboundQueue()

        var isEmpty: Bool { response.isEmpty && early.isEmpty && control.isEmpty && request.capacity == 0 }
    }

    private let inner: any Transport
    private let endpoint: WebSocketEndpoint
    private var state: State = .innerHandshake
    private var pending: Pending?
    private var decoder = WebSocketFrameDecoder()
    /// The connection's queue was empty after the last write: no message is partly written.
    private var betweenMessages = true
    private var drained = false

    /// Wraps `inner` (accepted, not yet set up) for `endpoint`.
    public init(inner: any Transport, endpoint: WebSocketEndpoint) {
        self.inner = inner
        self.endpoint = endpoint
    }

    public var fd: CInt { inner.fd }
    /// The TLS underneath (`wss`): whether it resumed a session.
    public var tlsSessionResumed: Bool? { inner.tlsSessionResumed }

    public var lastReadDrained: Bool { drained }

    public var messageFramer: (any MessageFramer.Type)? { WebSocketMessageFramer.self }

    public var interest: SelectorEvent {
        switch state {
        case .innerHandshake: return inner.interest
        case .readingRequest: return inner.interest.union(.read)
        case .writingResponse: return inner.interest.union(.write)
        case .open, .peerClosed:
            // Early bytes or a waiting control frame: ask for writability (nearly always there) so the
            // connection calls `read` again, which decodes and flushes them.
            guard let pending, !pending.early.isEmpty || !pending.control.isEmpty else { return inner.interest }
            return inner.interest.union(.write)
        case .closed: return []
        }
    }

    // MARK: Handshake

    public func handshake() throws(TransportError) -> IOResult<Void> {
        switch state {
        case .open, .peerClosed:
            return .processed(())
        case .closed:
            throw .closed
        case .innerHandshake:
            guard case .processed = try inner.handshake() else { return .wouldBlock }
            state = .readingRequest
            pending = Pending()
            return try handshake()
        case .readingRequest:
            guard try readRequest() else { return .wouldBlock }
            return try handshake()
        case .writingResponse:
            guard let pending else { throw .closed }
            _ = try inner.write(&pending.response)
            guard pending.response.isEmpty else { return .wouldBlock }
            pending.request = ByteBuffer()
            pending.response = OutboundQueue()
            if pending.isEmpty { self.pending = nil }
            state = .open
            return .processed(())
        }
    }

    /// Reads what the socket holds into the request buffer and checks it once the head is complete; true when
    /// the `101` is ready to be written.
    private func readRequest() throws(TransportError) -> Bool {
        guard let pending else { throw .closed }
        while true {
            switch try inner.read(into: &pending.request) {
            case .wouldBlock:
                return false
            case .processed(0):
                throw TransportError(kind: .closed, reason: "the peer closed during the WebSocket upgrade")
            case .processed:
                let result = pending.request.withReadableBytes { raw in
                    WebSocketHandshakeParser.parse(raw, maxHeadSize: endpoint.maxHeadSize)
                }
                switch result {
                case .incomplete:
                    if inner.lastReadDrained { return false }
                case .refused(let refusal):
                    throw refuse(refusal)
                case .complete(let request, let headLength):
                    switch endpoint.policy.evaluate(request) {
                    case .failure(let refusal):
                        throw refuse(refusal)
                    case .success(let acceptance):
                        pending.request.moveReaderIndex(forwardBy: headLength)
                        pending.early = pending.request.readableArray
                        pending.request = ByteBuffer()
                        pending.response.append(acceptance.responseBytes)
                        state = .writingResponse
                        return true
                    }
                }
            }
        }
    }

    /// Writes the refusal (best effort: one write), reads and drops what the client already sent (so closing
    /// does not reset the connection before the client reads the answer), and returns the error to fail with.
    private func refuse(_ refusal: WebSocketRefusal) -> TransportError {
        var answer = OutboundQueue()
        answer.append(refusal.responseBytes)
        _ = try? inner.write(&answer)
        discardInput()
        return TransportError(kind: .protocolFailure, reason: "WebSocket upgrade refused: \(refusal)")
    }

    /// Reads and drops up to 64 KiB the client sent and we will not process.
    private func discardInput() {
        var scratch = ByteBuffer()
        var total = 0
        while total < 64 * 1024, case .processed(let count)? = try? inner.read(into: &scratch), count > 0 {
            total += count
            scratch.clear()
        }
    }

    // MARK: Reading

    public func read(into buffer: inout ByteBuffer) throws(TransportError) -> IOResult<Int> {
        switch state {
        case .open: break
        case .peerClosed: return .processed(0)
        default: throw .closed
        }
        try flushControl()
        let count: Int
        if let pending, !pending.early.isEmpty {
            count = pending.early.count
            pending.early.withUnsafeBytes { buffer.writeBytes($0) }
            pending.early = []
            drained = false
        } else {
            switch try inner.read(into: &buffer) {
            case .wouldBlock:
                drained = true
                return .wouldBlock
            case .processed(0):
                return .processed(0)
            case .processed(let read):
                count = read
                drained = inner.lastReadDrained
            }
        }
        var controls: [WebSocketFrameDecoder.Control] = []
        var failure: WebSocketProtocolError?
        var kept = 0
        let limit = endpoint.maxMessageSize
        buffer.rewriteReadableTail(count) { raw in
            do throws(WebSocketProtocolError) {
                kept = try decoder.decode(raw, maxMessageSize: limit, controls: &controls)
            } catch {
                failure = error
            }
            return kept
        }
        for control in controls { try answer(control) }
        if let failure { throw fail(failure) }
        if state == .peerClosed {
            // Read again at once: the next read reports the end of the stream.
            drained = false
            return kept > 0 ? .processed(kept) : .processed(0)
        }
        // Only framing or control frames arrived: nothing for the connection, which waits for the next readiness.
        return kept > 0 ? .processed(kept) : .wouldBlock
    }

    // MARK: Writing

    public func write(_ queue: inout OutboundQueue) throws(TransportError) -> IOResult<Int> {
        switch state {
        case .open, .peerClosed: break
        default: throw .closed
        }
        if betweenMessages, let pending, !pending.control.isEmpty {
            _ = try inner.write(&pending.control)
            guard pending.control.isEmpty else { return .wouldBlock }
        }
        let result = try inner.write(&queue)
        betweenMessages = queue.isEmpty
        try flushControl()
        return result
    }

    public func close() {
        guard state != .closed else { return }
        state = .closed
        pending = nil
        inner.close()
    }

    // MARK: Control frames

    /// Answers a control frame: a pong for a ping, a close reply for a close (then the stream reads as ended).
    private func answer(_ control: WebSocketFrameDecoder.Control) throws(TransportError) {
        switch control {
        case .ping(let payload):
            queueControl(WebSocketFrameEncoder.frame(.pong, payload))
        case .pong:
            break
        case .close(let code, _):
            queueControl(code.map { WebSocketFrameEncoder.close($0.rawValue, reason: "") } ?? WebSocketFrameEncoder.frame(.close, []))
            state = .peerClosed
        }
        try flushControl()
    }

    private func queueControl(_ frame: [UInt8]) {
        let pending = self.pending ?? Pending()
        pending.control.append(frame)
        self.pending = pending
    }

    /// Writes waiting control frames if no message is partly written.
    private func flushControl() throws(TransportError) {
        guard betweenMessages, let pending, !pending.control.isEmpty else { return }
        _ = try inner.write(&pending.control)
        if pending.isEmpty { self.pending = nil }
    }

    /// A broken rule: the close frame with its code (when nothing is partly written), and the error to fail with.
    private func fail(_ error: WebSocketProtocolError) -> TransportError {
        if betweenMessages {
            var answer = OutboundQueue()
            answer.append(WebSocketFrameEncoder.close(error.code.rawValue, reason: error.reason))
            _ = try? inner.write(&answer)
        }
        discardInput()
        state = .peerClosed
        return TransportError(kind: .protocolFailure, reason: "WebSocket: \(error)")
    }
}

@available(*, unavailable)
extension WebSocketTransport: Sendable {}
