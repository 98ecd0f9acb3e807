import Glibc

/// The outcome of a non-blocking operation: it either did something or the kernel asked us to wait for readiness.
///
/// `EAGAIN`/`EWOULDBLOCK` are not errors on a non-blocking fd; they are the normal way of saying "come back when
/// epoll says so", so they are a value here and never thrown (NIO's `IOResult`).
public enum IOResult<T> {
    /// The call would have blocked; nothing happened. Wait for readiness and call again.
    case wouldBlock
    /// The call completed with this result (a byte count, an fd, ...).
    case processed(T)
}

extension IOResult: Sendable where T: Sendable {}
extension IOResult: Equatable where T: Equatable {}

/// A failed system call: the errno and the name of the call, e.g. `IOError: connect: Connection refused (errno 111)`.
///
/// This is LonglinkLoop's one error type. `EINTR` never surfaces (calls are retried), `EAGAIN` is
/// `IOResult.wouldBlock`, and `EBADF`/`EFAULT` crash because they mean a bug, not a condition to handle.
public struct IOError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The `errno` value the call failed with (compare with Glibc's `ECONNREFUSED`, `EMFILE`, ...).
    public let errno: CInt
    /// The system call (or library function) that failed, e.g. `"connect"`, `"epoll_ctl(ADD)"`.
    public let function: String

    /// Creates an error for `function` failing with `errno`.
    public init(errno: CInt, function: String) {
        self.errno = errno
        self.function = function
    }

    /// The `strerror` text for `errno`.
    public var reason: String {
        guard let text = strerror(errno) else { return "unknown error" }
        return String(cString: text)
    }

    public var description: String { "IOError: \(function): \(reason) (errno \(errno))" }
}
