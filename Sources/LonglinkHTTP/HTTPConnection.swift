import Glibc
import LonglinkCore
import LonglinkLoop
import Synchronization

/// One HTTP client connection on the server's loop: inbound bytes, the request being answered, pending output.
///
///     reading ──request──▶ waiting (handler runs; answers now or later) ──response──▶ reading (keep-alive)
///                                  └──startStream──▶ streaming ──finish/cut──▶ closed
///     any phase ──error, EOF, timeout, Connection: close──▶ closed
///
/// Reads stay on while a response or stream is pending, so a client that leaves is noticed at once; bytes that
/// arrive meanwhile are kept (pipelining) up to one maximal request.
final class HTTPConnection: SelectorHandler {
    private enum Phase {
        case reading
        case waiting(serial: UInt64, keepAlive: Bool, head: Bool, since: UInt64)
        case streaming(serial: UInt64)
        case closed
    }

    let id: UInt64
    let fd: CInt
    unowned let server: HTTPServer
    var registration: RegistrationID?
    private var phase: Phase = .reading
    private var inbound: [UInt8] = []
    private var outbound = OutboundQueue()
    private var closeAfterFlush = false
    private var serial: UInt64 = 0
    private var exchangeState: HTTPExchangeState?
    private var lastActivity: UInt64
    private var lastStreamWrite: UInt64 = 0
    private var requestStarted: UInt64?
    private var processScheduled = false

    init(id: UInt64, fd: CInt, server: HTTPServer) {
        self.id = id
        self.fd = fd
        self.server = server
        self.lastActivity = server.context.now
    }

    /// A connection dropped without `close()` (its loop ended) still closes its socket.
    deinit { if registration != nil { Socket.close(fd) } }

    private var isClosed: Bool { if case .closed = phase { true } else { false } }

    // MARK: Input

    func handleEvent(_ event: SelectorEvent) {
        if !event.isDisjoint(with: [.read, .readEOF, .reset, .error]) { readAvailable() }
        if event.contains(.write) && !isClosed { flush() }
    }

    private func readAvailable() {
        let limits = server.configuration.limits
        let cap = limits.maxHeadBytes + limits.maxBodyBytes + 4_096
        var total = 0
        var scratch = [UInt8](repeating: 0, count: 16 * 1024)
        while !isClosed && total < 256 * 1024 {
            let result: IOResult<Int>
            do {
                result = try scratch.withUnsafeMutableBytes { raw throws(IOError) in try Socket.read(fd, into: raw) }
            } catch {
                close()
                return
            }
            switch result {
            case .wouldBlock:
                processInbound()
                return
            case .processed(0):
                close()
                return
            case .processed(let count):
                total += count
                lastActivity = server.context.now
                if case .streaming = phase { continue }  // a stream reader's bytes mean nothing; drop them
                inbound.append(contentsOf: scratch[0..<count])
                if inbound.count > cap {
                    fail(HTTPParseError(.contentTooLarge, "more than \(cap) bytes without a complete request"))
                    return
                }
            }
        }
        processInbound()
    }

    /// Parses and dispatches requests while idle (one at a time; the next waits for the answer).
    private func processInbound() {
        while case .reading = phase, !inbound.isEmpty {
            let outcome: HTTPRequestParser.Outcome
            do {
                outcome = try HTTPRequestParser.parse(inbound[...], limits: server.configuration.limits)
            } catch {
                fail(error)
                return
            }
            switch outcome {
            case .needMoreData:
                if requestStarted == nil { requestStarted = server.context.now }
                return
            case .request(let request, let consumed):
                inbound.removeFirst(consumed)
                requestStarted = nil
                dispatch(request)
            }
        }
    }

    private func dispatch(_ request: HTTPRequest) {
        serial += 1
        let state = HTTPExchangeState(maxPending: server.configuration.maxPendingStreamWrites)
        exchangeState = state
        phase = .waiting(serial: serial, keepAlive: request.keepAlive, head: request.method == "HEAD", since: server.context.now)
        let exchange = HTTPExchange(
            loop: server.context.eventLoop,
            serverID: server.id,
            connectionID: id,
            serial: serial,
            state: state
        )
        if let response = server.handler(request, exchange) {
            complete(serial: serial, with: response)
        }
    }

    // MARK: Answers (from HTTPExchange, on the loop)

    func complete(serial: UInt64, with response: HTTPResponse) {
        guard case .waiting(let current, let keepAlive, let head, _) = phase, current == serial else { return }
        server.answered()
        var bytes = response.head(keepAlive: keepAlive)
        if !head { bytes += response.body }
        exchangeState?.markClosed()
        exchangeState = nil
        if keepAlive {
            phase = .reading
            enqueue(bytes)
            scheduleProcessing()
        } else {
            closeAfterFlush = true
            enqueue(bytes)
        }
    }

    func startStream(serial: UInt64, head: HTTPResponse) {
        guard case .waiting(let current, _, _, _) = phase, current == serial else { return }
        server.answered()
        phase = .streaming(serial: serial)
        lastStreamWrite = server.context.now
        enqueue(head.head(keepAlive: false, chunked: true))
    }

    func streamWrite(serial: UInt64, bytes: [UInt8]) {
        guard case .streaming(let current) = phase, current == serial, !bytes.isEmpty else { return }
        lastStreamWrite = server.context.now
        enqueue(Array((String(bytes.count, radix: 16) + "\r\n").utf8) + bytes + [13, 10])
        if outbound.queuedBytes > server.configuration.maxStreamBacklogBytes {
            exchangeState?.overflowed.store(true, ordering: .relaxed)
            server.logger.notice("http stream reader cut: \(outbound.queuedBytes) bytes waiting", [("http_conn", "\(id)")])
            close()
        }
    }

    func finishStream(serial: UInt64) {
        guard case .streaming(let current) = phase, current == serial else { return }
        closeAfterFlush = true
        enqueue(Array("0\r\n\r\n".utf8))
    }

    func abort(serial: UInt64, reason: String) {
        switch phase {
        case .waiting(let current, _, _, _) where current == serial, .streaming(let current) where current == serial:
            server.logger.debug("http exchange aborted: \(reason)", [("http_conn", "\(id)")])
            close()
        default:
            return
        }
    }

    /// Refuses what could not be parsed, then closes.
    private func fail(_ error: HTTPParseError) {
        server.answered()
        server.logger.debug("http request refused: \(error)", [("http_conn", "\(id)")])
        let response = HTTPResponse.error(error.status, error.reason)
        inbound = []
        closeAfterFlush = true
        phase = .closed  // no further request is read; the socket closes once the answer is flushed
        exchangeState?.markClosed()
        exchangeState = nil
        enqueueRaw(response.head(keepAlive: false) + response.body)
    }

    private func scheduleProcessing() {
        guard !processScheduled, !inbound.isEmpty else { return }
        processScheduled = true
        server.context.enqueue { [weak self] in
            guard let self else { return }
            self.processScheduled = false
            self.processInbound()
        }
    }

    // MARK: Timeouts

    func sweep(now: UInt64) {
        let configuration = server.configuration
        switch phase {
        case .reading:
            if let started = requestStarted, now &- started > configuration.requestTimeout.nanoseconds {
                fail(HTTPParseError(.requestTimeout, "request not complete within \(configuration.requestTimeout)"))
            } else if inbound.isEmpty && outbound.isEmpty && now &- lastActivity > configuration.idleTimeout.nanoseconds {
                close()
            }
        case .waiting(let serial, _, _, let since):
            if now &- since > configuration.responseTimeout.nanoseconds {
                complete(serial: serial, with: .error(.gatewayTimeout, "no answer within \(configuration.responseTimeout)"))
            }
        case .streaming(let serial):
            if let keepAlive = configuration.streamKeepAlive,
                now &- lastStreamWrite > configuration.streamKeepAliveInterval.nanoseconds
            {
                streamWrite(serial: serial, bytes: keepAlive)
            }
        case .closed:
            return
        }
    }

    // MARK: Output

    private func enqueue(_ bytes: [UInt8]) {
        guard !isClosed else { return }
        enqueueRaw(bytes)
    }

    private func enqueueRaw(_ bytes: [UInt8]) {
        guard registration != nil else { return }
        outbound.append(bytes)
        flush()
    }

    private func flush() {
        guard registration != nil else { return }
        if !outbound.isEmpty {
            do {
                _ = try outbound.write(to: fd)
                lastActivity = server.context.now
            } catch {
                close()
                return
            }
        }
        if outbound.isEmpty && closeAfterFlush {
            close()
            return
        }
        updateInterest()
    }

    private func updateInterest() {
        guard let registration else { return }
        var interest: SelectorEvent = closeAfterFlush ? [] : .read
        if !outbound.isEmpty { interest.insert(.write) }
        do {
            try server.context.reregister(registration, interest: interest)
        } catch {
            close()
        }
    }

    /// Closes now; a pending exchange or stream learns it through its close handlers.
    func close() {
        guard let registration else { return }
        self.registration = nil
        phase = .closed
        server.context.deregister(registration)
        Socket.close(fd)
        outbound.removeAll()
        inbound = []
        exchangeState?.markClosed()
        exchangeState = nil
        server.removed(self)
    }
}

@available(*, unavailable)
extension HTTPConnection: Sendable {}
