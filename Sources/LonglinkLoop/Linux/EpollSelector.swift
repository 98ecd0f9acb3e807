internal import CLonglinkLinux
import Glibc

/// The epoll backend (Linux only; the server's and the Linux client's default): four operations (Redis's
/// `aeApiAddEvent/DelEvent/Poll`) over one epoll fd. The only file that calls `epoll_*`; `Selector` switches to it.
///
/// **Level-triggered, on purpose.** An fd that still has data fires again on the next `epoll_wait`, so a handler
/// may stop after a fixed read budget per event (fairness between connections) without losing the rest, and
/// nobody has to read until `EAGAIN` to re-arm. Edge-triggered would save a few wake-ups but makes every handler
/// responsible for draining, and one missed drain is a hung connection.
///
/// **Stale events.** `epoll_data.u64` carries `generation << 32 | fd`. When a handler closes fd 7 and the next
/// `accept` returns 7 again within the same batch, the remaining event for the old 7 carries the old generation
/// and `LoopContext` drops it (NIO's `EPollUserData`).
///
/// Interest is translated to epoll bits in `epollMask(for:)` and back in `selectorEvent(from:)`, nowhere else.
final class EpollSelector {
    /// The epoll fd.
    let fd: CInt
    /// How many events one `epoll_wait` returns at most (later ones wait for the next iteration, still ready).
    let capacity: Int
    private let events: UnsafeMutablePointer<epoll_event>

    init(capacity: Int = 1024) throws(IOError) {
        precondition(MemoryLayout<epoll_event>.size == 12, "epoll_event must be packed to 12 bytes")
        self.fd = try syscallValue("epoll_create1") { epoll_create1(CLonglinkLinux_EPOLL_CLOEXEC()) }
        self.capacity = capacity
        self.events = .allocate(capacity: capacity)
        self.events.initialize(repeating: epoll_event(), count: capacity)
    }

    deinit {
        events.deallocate()
        Glibc.close(fd)
    }

    /// Packs a registration generation with the fd for `epoll_data.u64`.
    static func userData(fd: CInt, generation: UInt32) -> UInt64 {
        UInt64(generation) << 32 | UInt64(UInt32(bitPattern: fd))
    }

    /// The epoll bits for an interest. `EPOLLERR` and `EPOLLHUP` are always reported by the kernel.
    static func epollMask(for interest: SelectorEvent) -> UInt32 {
        var mask: UInt32 = 0
        if interest.contains(.read) { mask |= CLonglinkLinux_EPOLLIN() | CLonglinkLinux_EPOLLRDHUP() }
        if interest.contains(.write) { mask |= CLonglinkLinux_EPOLLOUT() }
        return mask
    }

    /// The readiness an epoll event reports.
    static func selectorEvent(from mask: UInt32) -> SelectorEvent {
        var fired: SelectorEvent = []
        if mask & CLonglinkLinux_EPOLLIN() != 0 { fired.insert(.read) }
        if mask & CLonglinkLinux_EPOLLOUT() != 0 { fired.insert(.write) }
        if mask & CLonglinkLinux_EPOLLRDHUP() != 0 { fired.insert(.readEOF) }
        if mask & CLonglinkLinux_EPOLLHUP() != 0 { fired.insert(.reset) }
        if mask & CLonglinkLinux_EPOLLERR() != 0 { fired.insert(.error) }
        return fired
    }

    /// Adds `fd` with `interest`, tagged with `generation`.
    func add(fd: CInt, interest: SelectorEvent, generation: UInt32) throws(IOError) {
        try control(EPOLL_CTL_ADD, "epoll_ctl(ADD)", fd: fd, interest: interest, generation: generation)
    }

    /// Changes the interest of a registered `fd`.
    func modify(fd: CInt, interest: SelectorEvent, generation: UInt32) throws(IOError) {
        try control(EPOLL_CTL_MOD, "epoll_ctl(MOD)", fd: fd, interest: interest, generation: generation)
    }

    /// Removes `fd`. `ENOENT` (already gone) is ignored.
    func remove(fd: CInt) {
        var event = epoll_event()
        let result = epoll_ctl(self.fd, EPOLL_CTL_DEL, fd, &event)
        if result < 0 {
            let code = errno
            precondition(code == ENOENT, "epoll_ctl(DEL) of fd \(fd) failed: \(IOError(errno: code, function: "epoll_ctl"))")
        }
    }

    private func control(
        _ op: CInt,
        _ name: StaticString,
        fd: CInt,
        interest: SelectorEvent,
        generation: UInt32
    ) throws(IOError) {
        var event = epoll_event()
        event.events = Self.epollMask(for: interest)
        event.data.u64 = Self.userData(fd: fd, generation: generation)
        try syscallValue(name) { epoll_ctl(self.fd, op, fd, &event) }
    }

    /// Waits up to `timeoutMillis` (-1 = forever) and calls `body(fd, generation, fired)` for each ready fd.
    /// Returns how many events fired.
    @discardableResult
    func wait(
        timeoutMillis: CInt,
        _ body: (CInt, UInt32, SelectorEvent) -> Void
    ) throws(IOError) -> Int {
        let count: Int
        switch try syscall("epoll_wait", { epoll_wait(fd, events, CInt(capacity), timeoutMillis) }) {
        case .processed(let n): count = Int(n)
        case .wouldBlock: count = 0
        }
        for index in 0..<count {
            let event = events[index]
            let data = event.data.u64
            let fd = CInt(bitPattern: UInt32(truncatingIfNeeded: data))
            let generation = UInt32(truncatingIfNeeded: data >> 32)
            body(fd, generation, Self.selectorEvent(from: event.events))
        }
        return count
    }
}
