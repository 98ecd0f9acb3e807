public import LonglinkCore
public import LonglinkLoop

/// Starting a server on another thread's loop in two steps: bind here, so that a taken address fails in the caller
/// and the caller knows the port at once, then make the server on the loop's thread, where it must live.
extension HTTPServer {
    /// A listening socket on `host:port` and the port it is bound to (the socket is closed if that cannot be read).
    public static func bind(host: String, port: Int, backlog: Int) throws(IOError) -> (fd: CInt, port: Int) {
        let fd = try Socket.listen(host: host, port: port, backlog: backlog)
        do {
            return (fd, try Socket.localPort(fd))
        } catch {
            Socket.close(fd)
            throw error
        }
    }

    /// Serves on the listening socket `fd` (owned from here on) on `loop`'s thread: there it makes the handler with
    /// `makeHandler`, the server, and passes both context and server to `started` (to keep the server). If the
    /// server cannot start, or the loop takes no more jobs, the socket is closed and `name`'s failure is logged.
    public static func start(
        _ name: String,
        listeningFD fd: CInt,
        on loop: EventLoop,
        configuration: Configuration,
        logger: Logger,
        makeHandler: @escaping @Sendable (LoopContext) -> Handler,
        started: @escaping @Sendable (LoopContext, HTTPServer) -> Void
    ) {
        let posted = loop.execute { context in
            do {
                let server = try HTTPServer(listeningFD: fd, on: context, configuration: configuration, logger: logger, handler: makeHandler(context))
                started(context, server)
            } catch {
                Socket.close(fd)
                logger.error("\(name) could not start: \(error)")
            }
        }
        if !posted { Socket.close(fd) }
    }
}
