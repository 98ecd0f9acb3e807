/// The loop's readiness seam: register fds with an interest, wait, and hear what fired. Two backends, picked by
/// `SelectorBackend` when the loop is created: `EpollSelector` (Linux, in `Linux/`) and `PollSelector` (POSIX).
///
/// Every backend keeps the same contract, which `SelectorContractTests` checks against both: level-triggered
/// readiness; `.read`/`.write` as interest, `.reset`/`.error` always reported (`.readEOF` only where the kernel
/// has it: epoll's `EPOLLRDHUP`; with poll a peer's shutdown is `.read` and the read returns 0); each event carries
/// the generation given at `add`/`modify`, so `LoopContext` drops events for an fd closed and reused in one batch.
///
/// **An enum, not a protocol or a generic.** The server's epoll path must not get slower: each operation here is a
/// switch over two cases and a direct call to a final class in the same module (inlinable), paid once per
/// `epoll_wait` batch or `epoll_ctl`, never per event; the per-event callback is the same non-escaping closure as
/// before. An existential (`any SelectorBackendProtocol`) would add a witness-table call per operation and hide
/// `wait`'s closure from the optimiser; a generic would make the public `LoopContext` (which every handler in every
/// module takes) generic, and across modules it would run unspecialised, through witness tables, anyway.
enum Selector {
    case epoll(EpollSelector)
    case poll(PollSelector)

    init(backend: SelectorBackend) throws(IOError) {
        switch backend {
        case .epoll: self = .epoll(try EpollSelector())
        case .poll: self = .poll(PollSelector())
        }
    }

    /// Adds `fd` with `interest`, tagged with `generation`.
    @inline(__always)
    func add(fd: CInt, interest: SelectorEvent, generation: UInt32) throws(IOError) {
        switch self {
        case .epoll(let selector): try selector.add(fd: fd, interest: interest, generation: generation)
        case .poll(let selector): try selector.add(fd: fd, interest: interest, generation: generation)
        }
    }

    /// Changes the interest of a registered `fd`.
    @inline(__always)
    func modify(fd: CInt, interest: SelectorEvent, generation: UInt32) throws(IOError) {
        switch self {
        case .epoll(let selector): try selector.modify(fd: fd, interest: interest, generation: generation)
        case .poll(let selector): try selector.modify(fd: fd, interest: interest, generation: generation)
        }
    }

    /// Removes `fd`; an fd that is not registered is ignored.
    @inline(__always)
    func remove(fd: CInt) {
        switch self {
        case .epoll(let selector): selector.remove(fd: fd)
        case .poll(let selector): selector.remove(fd: fd)
        }
    }

    /// Waits up to `timeoutMillis` (-1 = forever, 0 = just look) and calls `body(fd, generation, fired)` for each
    /// ready fd. Returns how many events fired.
    @inline(__always)
    @discardableResult
    func wait(timeoutMillis: CInt, _ body: (CInt, UInt32, SelectorEvent) -> Void) throws(IOError) -> Int {
        switch self {
        case .epoll(let selector): try selector.wait(timeoutMillis: timeoutMillis, body)
        case .poll(let selector): try selector.wait(timeoutMillis: timeoutMillis, body)
        }
    }

    /// Whether timers need the loop's timerfd (epoll) or ride on the wait timeout (poll).
    var usesTimerFD: Bool {
        if case .epoll = self { return true }
        return false
    }
}
