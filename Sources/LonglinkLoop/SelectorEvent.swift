/// Readiness of one file descriptor: what a registration asks for (`interest`) and what the selector reported
/// (`fired`). The names are epoll's; the poll backend maps `POLLIN`, `POLLOUT`, `POLLHUP` and `POLLERR` the same way.
///
/// Only `.read` and `.write` are meaningful as interest; `.readEOF`, `.reset` and `.error` are always reported.
/// Like Redis's `ae_epoll.c`, an error or hang-up also fires the `.read`/`.write` the registration asked for, so
/// the ordinary read or write path discovers the failure (a read returns 0 or throws) and no separate error
/// callback is needed.
public struct SelectorEvent: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Readable (`EPOLLIN`): data, a pending connection on a listener, or EOF.
    public static let read = SelectorEvent(rawValue: 1 << 0)
    /// Writable (`EPOLLOUT`): the send buffer has room, or a non-blocking connect finished.
    public static let write = SelectorEvent(rawValue: 1 << 1)
    /// The peer shut down its writing side (`EPOLLRDHUP`); reported only with `.read` interest, and only by the epoll
    /// backend (poll reports `.read`, and the read returns 0).
    public static let readEOF = SelectorEvent(rawValue: 1 << 2)
    /// Both directions are closed (`EPOLLHUP`), e.g. after a reset.
    public static let reset = SelectorEvent(rawValue: 1 << 3)
    /// An error is pending on the socket (`EPOLLERR`); the next read/write (or `SO_ERROR`) tells which.
    public static let error = SelectorEvent(rawValue: 1 << 4)

    /// No interest: the fd stays registered but only errors and hang-ups are reported.
    public static let none: SelectorEvent = []

    public var description: String {
        var names: [String] = []
        if contains(.read) { names.append("read") }
        if contains(.write) { names.append("write") }
        if contains(.readEOF) { names.append("readEOF") }
        if contains(.reset) { names.append("reset") }
        if contains(.error) { names.append("error") }
        return "[" + names.joined(separator: ",") + "]"
    }
}
