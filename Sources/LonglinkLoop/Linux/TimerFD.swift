internal import CLonglinkLinux
import Glibc

/// The epoll loop's timer wake-up: one timerfd (Linux only) armed at the earliest timer deadline, so `epoll_wait`
/// sleeps with no timeout arithmetic. The poll loop has none: it sleeps until that deadline in the poll timeout.
struct TimerFD {
    /// The timerfd (owned; `close` it).
    let fd: CInt

    /// A non-blocking, close-on-exec timerfd on the monotonic clock.
    init() throws(IOError) {
        fd = try syscallValue("timerfd_create") { timerfd_create(CLOCK_MONOTONIC, CLonglinkLinux_TFD_NONBLOCK_CLOEXEC()) }
    }

    /// Arms it to fire once at `deadline` (monotonic nanoseconds).
    func arm(at deadline: UInt64) {
        var spec = itimerspec()
        let absolute = Swift.max(deadline, 1)  // an all-zero it_value would disarm
        spec.it_value.tv_sec = Int(absolute / 1_000_000_000)
        spec.it_value.tv_nsec = Int(absolute % 1_000_000_000)
        do {
            try syscallValue("timerfd_settime") { timerfd_settime(fd, CLonglinkLinux_TFD_TIMER_ABSTIME(), &spec, nil) }
        } catch {
            preconditionFailure("\(error)")  // only EINVAL is possible, which would be a bug here
        }
    }

    /// Clears its readiness after it fired.
    func acknowledge() {
        var expirations: UInt64 = 0
        _ = try? syscall("read(timerfd)") { Glibc.read(fd, &expirations, 8) }
    }

    func close() { Glibc.close(fd) }
}
