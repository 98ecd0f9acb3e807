import Glibc

/// A listening socket registered on one loop: accepts connections and hands each accepted fd (non-blocking,
/// close-on-exec) to `onAccept` on that loop. Loop-confined.
///
/// Each `.read` event accepts until `EAGAIN` or `acceptBudget` connections, whichever comes first; the loop is
/// level-triggered, so a longer queue fires again next iteration after other connections had their turn. When the
/// process runs out of fds (`EMFILE`/`ENFILE`) the listener stops watching for `pausedFor` instead of spinning on a
/// queue it cannot drain, and reports the error.
public final class Listener: SelectorHandler {
    /// The listening socket (owned: closed by `close()`).
    public let fd: CInt
    /// The bound port (the real one when bound to port 0).
    public let port: Int
    /// The most connections accepted per readiness event.
    public let acceptBudget: Int
    /// How long to stop accepting after running out of file descriptors.
    public let pausedFor: Duration
    private unowned let context: LoopContext
    private let onAccept: (CInt) -> Void
    private let onError: (IOError) -> Void
    private var registration: RegistrationID?
    /// Connections accepted so far.
    public private(set) var acceptedCount = 0

    /// Registers an existing listening socket (see `Socket.listen`) on `context`'s loop; takes ownership of `fd`.
    public init(
        fd: CInt,
        on context: LoopContext,
        acceptBudget: Int = 64,
        pausedFor: Duration = .milliseconds(100),
        onError: @escaping (IOError) -> Void = { _ in },
        onAccept: @escaping (CInt) -> Void
    ) throws(IOError) {
        self.fd = fd
        self.port = try Socket.localPort(fd)
        self.acceptBudget = acceptBudget
        self.pausedFor = pausedFor
        self.context = context
        self.onAccept = onAccept
        self.onError = onError
        registration = try context.register(fd: fd, interest: .read, handler: self)
    }

    /// Binds `host:port` (port 0 picks a free port), listens and registers on `context`'s loop. Use
    /// `reusePort: true` with one listener per loop on the same port (see `Socket`).
    public static func bind(
        host: String,
        port: Int,
        on context: LoopContext,
        backlog: Int = 1024,
        reusePort: Bool = false,
        acceptBudget: Int = 64,
        onError: @escaping (IOError) -> Void = { _ in },
        onAccept: @escaping (CInt) -> Void
    ) throws(IOError) -> Listener {
        let fd = try Socket.listen(host: host, port: port, backlog: backlog, reusePort: reusePort)
        do {
            return try Listener(fd: fd, on: context, acceptBudget: acceptBudget, onError: onError, onAccept: onAccept)
        } catch {
            Socket.close(fd)
            throw error
        }
    }

    /// A listener released without `close()` (its loop ended) still closes its socket.
    deinit { if registration != nil { Socket.close(fd) } }

    /// True until `close()`.
    public var isOpen: Bool { registration != nil }

    public func handleEvent(_ event: SelectorEvent) {
        for _ in 0..<acceptBudget {
            guard registration != nil else { return }  // onAccept may close the listener
            do {
                guard let accepted = try Socket.accept(fd) else { return }
                acceptedCount += 1
                onAccept(accepted)
            } catch let error where error.errno == EMFILE || error.errno == ENFILE || error.errno == ENOBUFS
                || error.errno == ENOMEM
            {
                pause()
                onError(error)
                return
            } catch {
                onError(error)  // ECONNABORTED, EPERM (firewall), EPROTO: that one connection is lost; go on.
            }
        }
    }

    private func pause() {
        guard let registration else { return }
        try? context.reregister(registration, interest: .none)
        context.schedule(after: pausedFor) { [weak self] in
            guard let self, let registration = self.registration else { return }
            try? self.context.reregister(registration, interest: .read)
        }
    }

    /// Stops listening: deregisters and closes the socket. Queued, not yet accepted connections are reset.
    public func close() {
        guard let registration else { return }
        self.registration = nil
        context.deregister(registration)
        Socket.close(fd)
    }
}

@available(*, unavailable)
extension Listener: Sendable {}
