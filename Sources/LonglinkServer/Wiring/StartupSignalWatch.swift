import Foundation
import Glibc
public import LonglinkCore
import LonglinkLoop
import Synchronization

/// Honours SIGTERM and SIGINT while `serve` starts (waits for Redis with back-off, opens the store, connects the
/// broker), which can take as long as Redis stays down.
///
/// `serve` blocks the lifecycle signals in every thread at once (its signalfd needs that), and the signalfd on
/// the control loop exists only once the gateway serves: without this watch a stop request during a long start
/// stayed pending and the process had to be killed with SIGKILL. A thread waits for the signals with
/// `sigtimedwait`; on one it logs and exits the process with status 0 (nothing was served, nothing to drain).
/// `finish()` hands the signals over to the running gateway: one the watch picks up after that is sent to the
/// process again, for the signalfd. SIGHUP is left pending for the signalfd (a reload once serving).
public final class StartupSignalWatch: Sendable {
    private enum Phase { case watching, handedOver, exiting }

    private let phase = Mutex(Phase.watching)
    private let logger: Logger

    /// Starts watching on a thread of its own.
    public init(logger: Logger) {
        self.logger = logger
        Thread { [self] in watch() }.start()
    }

    /// Stops watching: signals from now on are the running gateway's (or the caller's, after a failed start).
    public func finish() {
        phase.withLock { if $0 == .watching { $0 = .handedOver } }
    }

    private func watch() {
        let watched = [UnixSignal.terminate, .interrupt]
        SignalSource.block(watched)  // already blocked by `serve`; sigtimedwait needs it in this thread too
        var set = sigset_t()
        sigemptyset(&set)
        for signal in watched { sigaddset(&set, signal.rawValue) }
        // Short waits so `finish()` is noticed soon; the thread then ends.
        var timeout = timespec(tv_sec: 0, tv_nsec: 50_000_000)
        while true {
            let number = sigtimedwait(&set, nil, &timeout)
            let now = phase.withLock { phase -> Phase in
                if phase == .watching && number > 0 { phase = .exiting }
                return phase
            }
            switch now {
            case .watching:
                continue  // timed out (EAGAIN) or interrupted (EINTR)
            case .handedOver:
                if number > 0 { kill(getpid(), number) }  // taken after the hand-over: queue it again for the signalfd
                return
            case .exiting:
                logger.notice("\(UnixSignal(rawValue: number)) while starting: exiting without serving")
                exit(0)
            }
        }
    }
}
