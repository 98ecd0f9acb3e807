public import LonglinkCore
public import LonglinkLoop
import Synchronization

/// A small HTTP/1.1 server on one `LonglinkLoop` event loop: the operations listener (metrics, health, admin).
///
/// Loop-confined: create it on its loop (inside `EventLoop.execute` or a loop's setup) and close it there.
/// Requests are parsed with `HTTPRequestParser` under `HTTPLimits`; what it does not understand is refused with
/// the status that says why (400, 408, 411, 413, 414, 431, 505) and the connection closes. Keep-alive and
/// pipelining are supported (one request at a time per connection); responses carry `Content-Length`, streams use
/// chunked encoding. Idle connections, slow request heads and handlers that never answer are timed out by a
/// sweep timer. No Foundation anywhere on the request path.
public final class HTTPServer {
    /// Limits and timeouts.
    public struct Configuration: Sendable {
        /// Request size limits.
        public var limits: HTTPLimits
        /// Open connections at most; past it a new connection gets 503 and is closed.
        public var maxConnections: Int
        /// A keep-alive connection with no request for this long is closed.
        public var idleTimeout: Duration
        /// A request whose head and body have not fully arrived after this long gets 408.
        public var requestTimeout: Duration
        /// A handler that has not answered after this long is answered with 504 for it.
        public var responseTimeout: Duration
        /// Bytes a stream may have waiting for the socket before its reader is cut.
        public var maxStreamBacklogBytes: Int
        /// Stream writes that may wait for the loop before the stream is cut (see `HTTPExchange.send`).
        public var maxPendingStreamWrites: Int
        /// Bytes sent on an idle stream every `streamKeepAliveInterval` (an SSE comment by default), nil for none.
        public var streamKeepAlive: [UInt8]?
        /// How often idle streams get `streamKeepAlive`.
        public var streamKeepAliveInterval: Duration
        /// How often timeouts are checked.
        public var sweepInterval: Duration

        /// Creates a configuration.
        public init(
            limits: HTTPLimits = HTTPLimits(),
            maxConnections: Int = 256,
            idleTimeout: Duration = .seconds(60),
            requestTimeout: Duration = .seconds(10),
            responseTimeout: Duration = .seconds(30),
            maxStreamBacklogBytes: Int = 1 << 20,
            maxPendingStreamWrites: Int = 4_096,
            streamKeepAlive: [UInt8]? = Array(": keep-alive\n\n".utf8),
            streamKeepAliveInterval: Duration = .seconds(15),
            sweepInterval: Duration = .milliseconds(500)
        ) {
            self.limits = limits
            self.maxConnections = maxConnections
            self.idleTimeout = idleTimeout
            self.requestTimeout = requestTimeout
            self.responseTimeout = responseTimeout
            self.maxStreamBacklogBytes = maxStreamBacklogBytes
            self.maxPendingStreamWrites = maxPendingStreamWrites
            self.streamKeepAlive = streamKeepAlive
            self.streamKeepAliveInterval = streamKeepAliveInterval
            self.sweepInterval = sweepInterval
        }
    }

    /// Answers one request on the loop thread: return the response, or nil and answer later through the exchange.
    public typealias Handler = (HTTPRequest, HTTPExchange) -> HTTPResponse?

    /// The bound port.
    public var port: Int { listener?.port ?? 0 }
    /// The configuration.
    public let configuration: Configuration
    let context: LoopContext
    let handler: Handler
    let logger: Logger
    let id: Int
    private var listener: Listener?
    private var connections: [UInt64: HTTPConnection] = [:]
    private var nextConnectionID: UInt64 = 1
    private var sweepTimer: TimerID?
    /// Requests answered so far (any status).
    public private(set) var requestCount = 0

    /// Serves on an already listening socket (see `Socket.listen`); takes ownership of `fd`.
    public init(
        listeningFD fd: CInt,
        on context: LoopContext,
        configuration: Configuration = Configuration(),
        logger: Logger = .disabled,
        handler: @escaping Handler
    ) throws(IOError) {
        self.context = context
        self.configuration = configuration
        self.handler = handler
        self.logger = logger
        self.id = nextServerID.wrappingAdd(1, ordering: .relaxed).oldValue
        HTTPServerDirectory.on(context).servers[id] = self
        do {
            listener = try Listener(
                fd: fd,
                on: context,
                onError: { [logger] error in logger.warning("http accept failed: \(error)") },
                onAccept: { [unowned self] fd in self.accept(fd) }
            )
        } catch {
            HTTPServerDirectory.on(context).servers[id] = nil
            throw error
        }
        sweepTimer = context.schedule(every: configuration.sweepInterval) { [unowned self] in self.sweep() }
    }

    /// Binds `host:port` (port 0 picks a free port) and serves on `context`'s loop.
    public static func bind(
        host: String,
        port: Int,
        on context: LoopContext,
        configuration: Configuration = Configuration(),
        logger: Logger = .disabled,
        handler: @escaping Handler
    ) throws(IOError) -> HTTPServer {
        let fd = try Socket.listen(host: host, port: port, backlog: 128)
        return try HTTPServer(listeningFD: fd, on: context, configuration: configuration, logger: logger, handler: handler)
    }

    /// Stops listening and closes every connection (open streams are cut). Idempotent.
    public func close() {
        listener?.close()
        listener = nil
        if let sweepTimer { context.cancel(sweepTimer) }
        sweepTimer = nil
        for connection in Array(connections.values) { connection.close() }
        HTTPServerDirectory.on(context).servers[id] = nil
    }

    /// Open connections.
    public var connectionCount: Int { connections.count }

    func connection(_ id: UInt64) -> HTTPConnection? { connections[id] }

    private func accept(_ fd: CInt) {
        guard connections.count < configuration.maxConnections else {
            let response = HTTPResponse.error(.serviceUnavailable, "too many connections")
            let bytes = response.head(keepAlive: false) + response.body
            _ = bytes.withUnsafeBytes { try? Socket.write(fd, $0) }
            Socket.close(fd)
            return
        }
        let id = nextConnectionID
        nextConnectionID += 1
        let connection = HTTPConnection(id: id, fd: fd, server: self)
        do {
            connection.registration = try context.register(fd: fd, interest: .read, handler: connection)
        } catch {
            Socket.close(fd)
            return
        }
        connections[id] = connection
    }

    func removed(_ connection: HTTPConnection) {
        connections[connection.id] = nil
    }

    func answered() { requestCount += 1 }

    private func sweep() {
        let now = context.now
        for connection in Array(connections.values) { connection.sweep(now: now) }
    }
}

@available(*, unavailable)
extension HTTPServer: Sendable {}

/// Process-wide server ids (a loop may run several servers; exchanges name theirs).
private let nextServerID = Atomic<Int>(1)

extension Duration {
    /// Whole nanoseconds (negative durations are zero).
    var nanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0 else { return 0 }
        return UInt64(seconds) &* 1_000_000_000 &+ UInt64(attoseconds / 1_000_000_000)
    }
}
