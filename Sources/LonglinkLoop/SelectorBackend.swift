/// Which readiness mechanism an event loop sleeps in, chosen when the loop (or its group) is created.
///
/// - `.epoll`: Linux's epoll, with an eventfd for wake-ups and a timerfd for timers. O(ready fds) per wait: the
///   server's backend, and the default on Linux.
/// - `.poll`: POSIX `poll(2)` (Linux, Android, Darwin), with a self-pipe for wake-ups and the poll timeout for
///   timers: no Linux-only call at all. O(registered fds) per wait, which is nothing for a client's few sockets;
///   the backend a mobile build of the client library uses.
public enum SelectorBackend: String, Sendable, CaseIterable, CustomStringConvertible {
    /// Linux epoll + eventfd + timerfd.
    case epoll
    /// POSIX poll + self-pipe + poll timeout.
    case poll

    /// `.epoll` on Linux, `.poll` everywhere else.
    public static var platformDefault: SelectorBackend {
        #if os(Linux)
        .epoll
        #else
        .poll
        #endif
    }

    public var description: String { rawValue }
}
