internal import CLonglinkLinux
import Glibc

/// The epoll loop's wake-up: one eventfd (Linux only), a counter that is readable while non-zero.
extension WakeupChannel {
    /// A non-blocking, close-on-exec eventfd.
    static func eventFD() throws(IOError) -> WakeupChannel {
        let fd = try syscallValue("eventfd") { eventfd(0, CLonglinkLinux_EFD_NONBLOCK_CLOEXEC()) }
        return WakeupChannel(kind: .eventFD, readFD: fd, writeFD: fd)
    }

    /// Adds one to the counter (`EAGAIN`, counter saturated: already woken, ignored).
    func signalEventFD() {
        var one: UInt64 = 1
        _ = try? syscall("write(eventfd)") { Glibc.write(writeFD, &one, 8) }
    }

    /// Reads the counter back to zero.
    func acknowledgeEventFD() {
        var value: UInt64 = 0
        _ = try? syscall("read(eventfd)") { Glibc.read(readFD, &value, 8) }
    }
}
