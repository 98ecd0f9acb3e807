internal import CLonglinkLinux
import Glibc

/// A Unix signal as a value (Hummingbird/service-lifecycle's `UnixSignal`).
public struct UnixSignal: Hashable, Sendable, CustomStringConvertible {
    /// The signal number.
    public let rawValue: CInt

    /// Creates a signal from its number.
    public init(rawValue: CInt) { self.rawValue = rawValue }

    /// `SIGTERM`: orderly shutdown (drain and exit).
    public static let terminate = UnixSignal(rawValue: SIGTERM)
    /// `SIGINT`: Ctrl-C.
    public static let interrupt = UnixSignal(rawValue: SIGINT)
    /// `SIGHUP`: reload configuration.
    public static let hangup = UnixSignal(rawValue: SIGHUP)
    /// The three signals the gateway handles.
    public static let lifecycle: [UnixSignal] = [.terminate, .interrupt, .hangup]

    public var description: String {
        switch rawValue {
        case SIGTERM: "SIGTERM"
        case SIGINT: "SIGINT"
        case SIGHUP: "SIGHUP"
        default: "signal \(rawValue)"
        }
    }
}

/// Delivers Unix signals as ordinary loop events through a `signalfd` (no async-signal-safety puzzles, no
/// Dispatch source). Loop-confined; the gateway puts one on loop 0.
///
/// **Block the signals first, in the main thread, before any other thread starts:** call
/// `SignalSource.block(UnixSignal.lifecycle)` at the top of `main`. Threads inherit the mask they are created with;
/// a thread that does not block a signal would receive its default action (termination) instead of the signalfd.
/// The initializer also blocks the signals in the loop thread, so signals sent to that thread always queue.
public final class SignalSource: SelectorHandler {
    /// The signalfd (owned).
    public let fd: CInt
    /// The signals watched.
    public let signals: [UnixSignal]
    private unowned let context: LoopContext
    private let handler: (UnixSignal) -> Void
    private var registration: RegistrationID?

    /// Blocks `signals` in the calling thread (and in threads it creates later). Call early in `main`.
    public static func block(_ signals: [UnixSignal]) {
        var set = makeSet(signals)
        let result = pthread_sigmask(SIG_BLOCK, &set, nil)
        precondition(result == 0, "pthread_sigmask: \(IOError(errno: result, function: "pthread_sigmask"))")
    }

    /// Ignores `SIGPIPE` process-wide. Longlink's own writes use `MSG_NOSIGNAL`, but C libraries writing to
    /// sockets (OpenSSL, hiredis) do not, and a peer closing mid-write must not kill the server.
    public static func ignoreBrokenPipe() {
        signal(SIGPIPE, SIG_IGN)
    }

    /// Watches `signals` on `context`'s loop; `handler` runs on the loop for each delivery.
    public init(
        signals: [UnixSignal],
        on context: LoopContext,
        handler: @escaping (UnixSignal) -> Void
    ) throws(IOError) {
        Self.block(signals)
        var set = Self.makeSet(signals)
        self.fd = try syscallValue("signalfd") { signalfd(-1, &set, CLonglinkLinux_SFD_NONBLOCK_CLOEXEC()) }
        self.signals = signals
        self.context = context
        self.handler = handler
        do {
            registration = try context.register(fd: fd, interest: .read, handler: self)
        } catch {
            Glibc.close(fd)
            throw error
        }
    }

    deinit { if registration != nil { Glibc.close(fd) } }

    public func handleEvent(_ event: SelectorEvent) {
        var info = signalfd_siginfo()
        // A bounded batch per event; the rest (if any) fires again next iteration.
        for _ in 0..<16 {
            guard registration != nil else { return }
            let result = try? syscall("read(signalfd)") {
                Glibc.read(fd, &info, MemoryLayout<signalfd_siginfo>.size)
            }
            guard case .processed(let count)? = result, count == MemoryLayout<signalfd_siginfo>.size else { return }
            handler(UnixSignal(rawValue: CInt(CLonglinkLinux_signalfd_signo(&info))))
        }
    }

    /// Stops watching and closes the signalfd (the signals stay blocked).
    public func close() {
        guard let registration else { return }
        self.registration = nil
        context.deregister(registration)
        Glibc.close(fd)
    }

    private static func makeSet(_ signals: [UnixSignal]) -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in signals { sigaddset(&set, signal.rawValue) }
        return set
    }
}

@available(*, unavailable)
extension SignalSource: Sendable {}
