import Glibc
public import LonglinkCore
public import LonglinkLoop

/// Two transports of one kind over a real loopback connection, driven by hand on the test's thread: the server
/// side made by the factory for an accepted socket, the client side for an outgoing one. `pump` runs handshakes,
/// writes what is queued and reads what arrives until a condition holds (bounded), recording errors instead of
/// throwing them, so a check can look at what each side saw.
public final class TransportPair {
    /// One end: its transport and what happened to it.
    public final class End {
        /// The transport.
        public let transport: any Transport
        /// Whether `handshake()` reported `.processed`.
        public fileprivate(set) var ready = false
        /// What `read` delivered.
        public var received = ByteBuffer()
        /// What waits to be written.
        public var outbound = OutboundQueue()
        /// Whether a `read` reported the end of the stream.
        public fileprivate(set) var ended = false
        /// The first error a call threw; the end is left alone afterwards.
        public fileprivate(set) var error: TransportError?
        /// Writes that left bytes queued (the socket took part of them, or none).
        public fileprivate(set) var writesLeavingBytes = 0
        /// While true, `pump` does not read from this end (its socket fills up).
        public var readsPaused = false
        /// Set by `close()`: `pump` leaves the end alone.
        public private(set) var closed = false

        init(_ transport: any Transport) { self.transport = transport }

        /// Whether everything queued left the transport (nothing in the queue, and the transport waits for no
        /// writability to flush bytes of its own).
        public var flushed: Bool { outbound.isEmpty && !transport.interest.contains(.write) }

        /// Queues `frame` as the connection would: wrapped in a message of the transport's protocol, if it has one.
        public func send(_ frame: [UInt8]) {
            outbound.append(transport.messageFramer?.message(carrying: frame) ?? frame)
        }

        /// The received bytes.
        public var bytes: [UInt8] { received.readableArray }

        /// Closes the transport (and its fd).
        public func close() {
            closed = true
            transport.close()
        }

        /// One round: handshake, write, read; whether anything moved.
        fileprivate func step() -> Bool {
            guard error == nil, !closed else { return false }
            var progressed = false
            do {
                if !ready {
                    guard case .processed = try transport.handshake() else { return false }
                    ready = true
                    progressed = true
                }
                if !outbound.isEmpty || transport.interest.contains(.write) {
                    let before = outbound.queuedBytes
                    _ = try transport.write(&outbound)
                    if outbound.queuedBytes != before { progressed = true }
                    if !outbound.isEmpty { writesLeavingBytes += 1 }
                }
                if !ended && !readsPaused {
                    reading: for _ in 0..<64 {
                        switch try transport.read(into: &received) {
                        case .wouldBlock:
                            break reading
                        case .processed(0):
                            ended = true
                            progressed = true
                            break reading
                        case .processed:
                            progressed = true
                        }
                    }
                }
            } catch {
                self.error = error
                progressed = true
            }
            return progressed
        }

        fileprivate var pollEvents: Int16 {
            guard error == nil, !closed else { return 0 }
            var events: Int16 = 0
            if !ended && !readsPaused { events |= Int16(POLLIN) }
            if !outbound.isEmpty || transport.interest.contains(.write) {
                events |= Int16(POLLOUT)
            }
            if !ready && transport.interest.contains(.read) { events |= Int16(POLLIN) }
            return events
        }
    }

    /// The accepted side.
    public let server: End
    /// The connecting side.
    public let client: End

    /// Connects a client transport of `clientFactory` to a server transport of `serverFactory` over 127.0.0.1
    /// (port 0). `sendBuffer`/`receiveBuffer` set `SO_SNDBUF`/`SO_RCVBUF` on both sockets (the receive buffer on
    /// the listener before the connection exists, so the window is small from the start).
    public init(
        server serverFactory: any TransportFactory,
        client clientFactory: any TransportFactory,
        sendBuffer: Int? = nil,
        receiveBuffer: Int? = nil
    ) throws {
        signal(SIGPIPE, SIG_IGN)  // OpenSSL writes with write(2): a reset peer must be an error, not a signal
        let listener = try Socket.listen(host: "127.0.0.1", port: 0)
        defer { Socket.close(listener) }
        if let receiveBuffer { try Socket.setBufferSizes(listener, receive: receiveBuffer) }
        let port = try Socket.localPort(listener)
        let (fd, _) = try Socket.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: port))
        var accepted: CInt?
        let deadline = ContinuousClock.now + .seconds(5)
        while accepted == nil && ContinuousClock.now < deadline {
            accepted = try Socket.accept(listener)
            if accepted == nil {
                var pfd = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
                _ = poll(&pfd, 1, 10)
            }
        }
        guard let accepted else {
            Socket.close(fd)
            throw IOError(errno: ETIMEDOUT, function: "accept")
        }
        do {
            try Socket.setBufferSizes(fd, receive: receiveBuffer, send: sendBuffer)
            try Socket.setBufferSizes(accepted, receive: receiveBuffer, send: sendBuffer)
        } catch {
            Socket.close(fd)
            Socket.close(accepted)
            throw error
        }
        let serverTransport: any Transport
        do {
            serverTransport = try serverFactory.makeTransport(fd: accepted, role: .accepted)
        } catch {
            Socket.close(fd)
            Socket.close(accepted)
            throw error
        }
        server = End(serverTransport)
        do {
            client = End(try clientFactory.makeTransport(fd: fd, role: .connecting(serverName: "localhost")))
        } catch {
            Socket.close(fd)
            serverTransport.close()
            throw error
        }
    }

    deinit { close() }

    /// Closes both ends.
    public func close() {
        if !server.closed { server.close() }
        if !client.closed { client.close() }
    }

    /// Drives both ends until `condition` holds or `timeout` passes; returns whether it held.
    @discardableResult
    public func pump(timeout: Duration = .seconds(10), until condition: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let serverMoved = server.step()
            let clientMoved = client.step()
            if condition() { return true }
            if !serverMoved && !clientMoved { waitForReadiness() }
        }
        return condition()
    }

    /// Both handshakes finished (bounded).
    public func handshake(timeout: Duration = .seconds(10)) -> Bool {
        pump(timeout: timeout) { (server.ready && client.ready) || server.error != nil || client.error != nil }
            && server.ready && client.ready
    }

    /// Waits (at most 2 ms) for either socket to become ready for what its end wants.
    private func waitForReadiness() {
        var fds: [pollfd] = []
        for end in [server, client] where !end.closed && end.pollEvents != 0 {
            fds.append(pollfd(fd: end.transport.fd, events: end.pollEvents, revents: 0))
        }
        if fds.isEmpty {
            usleep(1_000)
        } else {
            _ = poll(&fds, nfds_t(fds.count), 2)
        }
    }
}

@available(*, unavailable)
extension TransportPair: Sendable {}
