import Glibc

/// Runs one system call the way every call in LonglinkLoop is run (NIO's `syscall(blocking:where:_:)`):
///
/// - `EINTR` is retried, so a signal never surfaces as an error;
/// - `EAGAIN`/`EWOULDBLOCK` become `IOResult.wouldBlock`;
/// - `EBADF` and `EFAULT` crash: they mean we passed a closed fd or a bad pointer, which is a bug to fix, not a
///   condition to handle (NIO's "unacceptable errno");
/// - any other errno is thrown as `IOError(errno:function:)`.
///
/// `body` returns the call's result, where `-1` (any negative value) means "look at errno".
/// Do not use it for `close`: on Linux a `close` interrupted by a signal has still closed the fd, and retrying
/// could close an fd another thread just opened (see `Socket.close`).
@inline(__always)
func syscall<T: FixedWidthInteger>(
    _ function: StaticString,
    _ body: () -> T
) throws(IOError) -> IOResult<T> {
    while true {
        let result = body()
        if result >= 0 { return .processed(result) }
        let code = errno
        switch code {
        case EINTR:
            continue
        case EAGAIN, EWOULDBLOCK:
            return .wouldBlock
        case EBADF, EFAULT:
            preconditionFailure("\(function) failed with unacceptable errno \(code): \(IOError(errno: code, function: "\(function)").reason)")
        default:
            throw IOError(errno: code, function: "\(function)")
        }
    }
}

/// `syscall` for calls that cannot return `EAGAIN` (socket, bind, epoll_ctl, setsockopt, ...): returns the value
/// directly and treats an unexpected `EAGAIN` as an ordinary error.
@inline(__always)
@discardableResult
func syscallValue<T: FixedWidthInteger>(
    _ function: StaticString,
    _ body: () -> T
) throws(IOError) -> T {
    switch try syscall(function, body) {
    case .processed(let value): return value
    case .wouldBlock: throw IOError(errno: EAGAIN, function: "\(function)")
    }
}
