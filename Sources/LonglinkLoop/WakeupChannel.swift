import Glibc

/// How another thread wakes a loop asleep in its selector: an fd that becomes readable when signalled.
///
/// The epoll loop uses an eventfd (one fd, Linux only: `WakeupChannel+EventFD.swift`); the poll loop uses a
/// self-pipe (POSIX): `signal` writes a byte to the write end, `acknowledge` drains the read end. `Inbox` merges
/// wake-ups, so a channel is signalled about once per drain whatever the number of posts.
struct WakeupChannel: Sendable {
    enum Kind: Sendable {
        case eventFD
        case pipe
    }

    let kind: Kind
    /// The fd registered on the selector (read interest).
    let readFD: CInt
    /// The fd other threads write (the same fd as `readFD` for an eventfd).
    let writeFD: CInt

    /// The channel a loop on `backend` uses: an eventfd for epoll, a self-pipe for poll.
    static func make(for backend: SelectorBackend) throws(IOError) -> WakeupChannel {
        switch backend {
        case .epoll: try eventFD()
        case .poll: try selfPipe()
        }
    }

    /// A non-blocking, close-on-exec pipe (`pipe` + `fcntl`: `pipe2` is not on Darwin).
    static func selfPipe() throws(IOError) -> WakeupChannel {
        var fds: [CInt] = [-1, -1]
        try syscallValue("pipe") { pipe(&fds) }
        let channel = WakeupChannel(kind: .pipe, readFD: fds[0], writeFD: fds[1])
        do {
            for fd in fds {
                let flags = try syscallValue("fcntl(F_GETFL)") { fcntl(fd, F_GETFL) }
                try syscallValue("fcntl(F_SETFL)") { fcntl(fd, F_SETFL, flags | O_NONBLOCK) }
                try syscallValue("fcntl(F_SETFD)") { fcntl(fd, F_SETFD, FD_CLOEXEC) }
            }
        } catch {
            channel.close()
            throw error
        }
        return channel
    }

    /// Makes `readFD` readable. A full pipe or a saturated eventfd (`EAGAIN`) means the loop is woken already.
    func signal() {
        switch kind {
        case .eventFD: signalEventFD()
        case .pipe:
            var byte: UInt8 = 1
            _ = try? syscall("write(wake-up pipe)") { Glibc.write(writeFD, &byte, 1) }
        }
    }

    /// Clears `readFD`'s readiness (called when the selector reports it).
    func acknowledge() {
        switch kind {
        case .eventFD: acknowledgeEventFD()
        case .pipe:
            var bytes: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
            let size = MemoryLayout.size(ofValue: bytes)
            while case .processed(let count)? = try? syscall("read(wake-up pipe)", { Glibc.read(readFD, &bytes, size) }),
                count == size
            {}
        }
    }

    /// Closes the channel's fds.
    func close() {
        Glibc.close(readFD)
        if writeFD != readFD { Glibc.close(writeFD) }
    }
}
