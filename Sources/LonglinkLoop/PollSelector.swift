import Glibc

/// The `poll(2)` backend: POSIX only (Linux, Android, Darwin), for the client library where epoll does not exist.
///
/// One `pollfd` per registration in a dense array (poll's argument, rebuilt never: edited in place), and per fd
/// its slot and generation. Removal moves the last slot into the hole. `wait` copies the ready fds out before any
/// handler runs, because a handler may add or remove fds (which moves slots); events for registrations removed or
/// replaced in the same batch are dropped by `LoopContext` through the generation, as with epoll.
///
/// Each wait costs O(registered fds): nothing for a client's two or three, too much for a server's 20,000, which
/// is why the server stays on epoll. `POLLRDHUP` is Linux-only and not asked for: a peer's shutdown shows as
/// `.read`, and the read returns 0.
final class PollSelector {
    /// What `poll` is given: one entry per registered fd, in slot order.
    private var pollFDs: [pollfd] = []
    /// The registration generation of each slot.
    private var generations: [UInt32] = []
    /// Slot of each fd, -1 when it is not registered (indexed by fd, grown on demand).
    private var slotOfFD: [Int] = []
    /// Ready fds of the last wait, copied out before dispatch (capacity reused).
    private var ready: [(fd: CInt, generation: UInt32, fired: SelectorEvent)] = []

    init() {}

    /// The poll bits for an interest. `POLLERR`, `POLLHUP` and `POLLNVAL` are always reported.
    static func pollMask(for interest: SelectorEvent) -> Int16 {
        var mask: Int16 = 0
        if interest.contains(.read) { mask |= Int16(POLLIN) }
        if interest.contains(.write) { mask |= Int16(POLLOUT) }
        return mask
    }

    /// The readiness a `revents` reports. `POLLNVAL` (an fd closed while registered, a bug) is reported as an error
    /// and a reset, so the handler closes it instead of the loop spinning on it.
    static func selectorEvent(from revents: Int16) -> SelectorEvent {
        var fired: SelectorEvent = []
        if revents & Int16(POLLIN) != 0 { fired.insert(.read) }
        if revents & Int16(POLLOUT) != 0 { fired.insert(.write) }
        if revents & Int16(POLLHUP) != 0 { fired.insert(.reset) }
        if revents & Int16(POLLERR) != 0 { fired.insert(.error) }
        if revents & Int16(POLLNVAL) != 0 { fired.formUnion([.error, .reset]) }
        return fired
    }

    private func slot(of fd: CInt) -> Int? {
        let index = Int(fd)
        guard index >= 0, index < slotOfFD.count, slotOfFD[index] >= 0 else { return nil }
        return slotOfFD[index]
    }

    /// Adds `fd` with `interest`, tagged with `generation`. `EEXIST` if it is already registered (as epoll).
    func add(fd: CInt, interest: SelectorEvent, generation: UInt32) throws(IOError) {
        guard fd >= 0 else { throw IOError(errno: EBADF, function: "poll(add)") }
        guard slot(of: fd) == nil else { throw IOError(errno: EEXIST, function: "poll(add)") }
        if Int(fd) >= slotOfFD.count {
            slotOfFD.append(contentsOf: repeatElement(-1, count: Int(fd) + 1 - slotOfFD.count))
        }
        slotOfFD[Int(fd)] = pollFDs.count
        pollFDs.append(pollfd(fd: fd, events: Self.pollMask(for: interest), revents: 0))
        generations.append(generation)
    }

    /// Changes the interest of a registered `fd`. `ENOENT` if it is not registered (as epoll).
    func modify(fd: CInt, interest: SelectorEvent, generation: UInt32) throws(IOError) {
        guard let slot = slot(of: fd) else { throw IOError(errno: ENOENT, function: "poll(modify)") }
        pollFDs[slot].events = Self.pollMask(for: interest)
        generations[slot] = generation
    }

    /// Removes `fd`; an fd that is not registered is ignored.
    func remove(fd: CInt) {
        guard let slot = slot(of: fd) else { return }
        let last = pollFDs.count - 1
        if slot != last {
            pollFDs[slot] = pollFDs[last]
            generations[slot] = generations[last]
            slotOfFD[Int(pollFDs[slot].fd)] = slot
        }
        pollFDs.removeLast()
        generations.removeLast()
        slotOfFD[Int(fd)] = -1
    }

    /// Waits up to `timeoutMillis` (-1 = forever) and calls `body(fd, generation, fired)` for each ready fd.
    /// Returns how many events fired.
    @discardableResult
    func wait(timeoutMillis: CInt, _ body: (CInt, UInt32, SelectorEvent) -> Void) throws(IOError) -> Int {
        let count: Int
        let result = try pollFDs.withUnsafeMutableBufferPointer { fds throws(IOError) in
            try syscall("poll") { Glibc.poll(fds.baseAddress, nfds_t(fds.count), timeoutMillis) }
        }
        switch result {
        case .processed(let n): count = Int(n)
        case .wouldBlock: count = 0
        }
        guard count > 0 else { return 0 }
        ready.removeAll(keepingCapacity: true)
        for slot in pollFDs.indices where pollFDs[slot].revents != 0 {
            let entry = pollFDs[slot]
            ready.append((entry.fd, generations[slot], Self.selectorEvent(from: entry.revents)))
            if ready.count == count { break }
        }
        for event in ready { body(event.fd, event.generation, event.fired) }
        return ready.count
    }
}
