import Glibc

/// Small TCP socket functions with plain names, like Redis's `anet.c`. Every socket they create is non-blocking
/// and close-on-exec; every failure is a thrown `IOError` naming the call. The Linux-only calls (`accept4`,
/// `SOCK_NONBLOCK`, `SO_REUSEPORT`'s load spreading, `IP_BIND_ADDRESS_NO_PORT`, `MSG_NOSIGNAL`) are in
/// `Linux/Socket+Linux.swift`.
///
/// **One listener per loop with `SO_REUSEPORT` (recommended for the gateway).** Each loop binds its own listening
/// socket to the same port and the kernel spreads incoming connections across them. Accepting then costs no
/// cross-thread hand-off (an accepted fd never changes thread), there is no single acceptor thread to saturate,
/// and a busy loop is not handed more work by a round-robin that cannot see its load. The price is that the
/// kernel's hash does not know about loop load either, and connections queued on a listener that closes are
/// reset; at shutdown close all listeners first. One acceptor that hands fds to `EventLoopGroup.next()` through
/// `execute` also works (every loop then costs one inbox job per connection) and is the fallback where
/// `SO_REUSEPORT` is unwanted.
///
/// **`SO_REUSEPORT` shares a port with every socket of the same user that sets it, not only with this process's**:
/// a second gateway started on the same port would silently split the clients with the first. `listenShared`
/// therefore first checks that nothing listens there, then binds the loops' sockets.
public enum Socket {
    /// Creates a listening TCP socket bound to `address`, with `SO_REUSEADDR` (restart without waiting for
    /// TIME_WAIT) and, if asked, `SO_REUSEPORT` (one listener per loop on the same port).
    public static func listen(
        on address: SocketAddress,
        backlog: Int = 1024,
        reusePort: Bool = false
    ) throws(IOError) -> CInt {
        let fd = try makeStreamSocket(family: address.family)
        do {
            try setOption(fd, SOL_SOCKET, SO_REUSEADDR, 1, "setsockopt(SO_REUSEADDR)")
            if reusePort { try enableReusePort(fd) }
            try syscallValue("bind") { address.withSockAddr { Glibc.bind(fd, $0, $1) } }
            try syscallValue("listen") { Glibc.listen(fd, CInt(clamping: backlog)) }
            return fd
        } catch {
            close(fd)
            throw error
        }
    }

    /// `listen(on:)` for a numeric host (`0.0.0.0`, `::`, `127.0.0.1`, `localhost`) and a port (0 = any free port).
    public static func listen(
        host: String,
        port: Int,
        backlog: Int = 1024,
        reusePort: Bool = false
    ) throws(IOError) -> CInt {
        try listen(on: SocketAddress(ipAddress: host, port: port), backlog: backlog, reusePort: reusePort)
    }

    /// `count` listening sockets on one port with `SO_REUSEPORT`, one per loop (port 0: one free port for all).
    /// Throws `EADDRINUSE` (from `bind`) when any other socket listens on `host:port`, whoever opened it and
    /// whether or not it set `SO_REUSEPORT`, so another process never joins (or is joined by) these sockets.
    ///
    /// The check binds a probe socket without `SO_REUSEPORT` and closes it before the loops bind. A process that
    /// binds the port with `SO_REUSEPORT` in the microseconds between the two would still share it; a second
    /// gateway started later, the case that matters (a stale process, a second `make run`), is refused.
    public static func listenShared(host: String, port: Int, count: Int, backlog: Int = 1024) throws(IOError) -> [CInt] {
        // Port 0 needs no probe: the kernel picks a port no socket is bound to.
        if port != 0 { try refuseIfListening(SocketAddress(ipAddress: host, port: port)) }
        var fds: [CInt] = []
        do {
            let first = try listen(host: host, port: port, backlog: backlog, reusePort: true)
            fds.append(first)
            let bound = try localPort(first)
            for _ in 1..<max(1, count) { fds.append(try listen(host: host, port: bound, backlog: backlog, reusePort: true)) }
        } catch {
            for fd in fds { close(fd) }
            throw error
        }
        return fds
    }

    /// Throws `EADDRINUSE` when a socket listens on `address`: a socket without `SO_REUSEPORT` cannot bind a port
    /// on which any socket listens. `SO_REUSEADDR` keeps a previous run's connections in `TIME_WAIT` from counting.
    private static func refuseIfListening(_ address: SocketAddress) throws(IOError) {
        let fd = try makeStreamSocket(family: address.family)
        defer { close(fd) }
        try setOption(fd, SOL_SOCKET, SO_REUSEADDR, 1, "setsockopt(SO_REUSEADDR)")
        try syscallValue("bind") { address.withSockAddr { Glibc.bind(fd, $0, $1) } }
    }

    /// Accepts one pending connection as a non-blocking, close-on-exec socket; nil when none is pending.
    /// `ECONNABORTED` (the peer gave up while queued) is thrown like any error; callers just carry on.
    public static func accept(_ listener: CInt) throws(IOError) -> CInt? {
        switch try acceptNonBlocking(listener) {
        case .processed(let fd): return fd
        case .wouldBlock: return nil
        }
    }

    /// Starts a non-blocking connect. Returns the socket and whether it is already connected; if not, wait for
    /// `.write` readiness and call `finishConnect`. A refusal reported immediately is thrown (and the fd closed).
    ///
    /// `source` (port 0) binds the local address first, with `IP_BIND_ADDRESS_NO_PORT` so the kernel still
    /// picks the port at connect time, per destination: each source address then has a whole ephemeral range per
    /// server address (a load generator spreads connections over 127.0.0.x this way). An address this host does not
    /// have fails with `EADDRNOTAVAIL` from `bind`; a source whose ports are all taken fails with `EADDRNOTAVAIL`
    /// from `connect`.
    public static func connect(to address: SocketAddress, from source: SocketAddress? = nil) throws(IOError) -> (fd: CInt, connected: Bool) {
        let fd = try makeStreamSocket(family: address.family)
        if let source {
            do {
                // Best effort: without it (old kernels) bind picks a port now, which still works, just with one
                // ephemeral range per source instead of one per source and destination.
                try? enableBindAddressNoPort(fd)
                try syscallValue("bind") { source.withSockAddr { Glibc.bind(fd, $0, $1) } }
            } catch {
                close(fd)
                throw error
            }
        }
        let result = address.withSockAddr { Glibc.connect(fd, $0, $1) }
        if result == 0 { return (fd, true) }
        let code = errno
        // EINTR on a non-blocking connect: the connect goes on in the background, exactly like EINPROGRESS.
        if code == EINPROGRESS || code == EINTR { return (fd, false) }
        close(fd)
        throw IOError(errno: code, function: "connect")
    }

    /// Completes a non-blocking connect after `.write` readiness: throws the connect's error (`SO_ERROR`, e.g.
    /// `ECONNREFUSED`, reported as function `connect`), returns true once connected, false if still in progress.
    public static func finishConnect(_ fd: CInt) throws(IOError) -> Bool {
        var pending: CInt = 0
        var length = socklen_t(MemoryLayout<CInt>.size)
        try syscallValue("getsockopt(SO_ERROR)") { getsockopt(fd, SOL_SOCKET, SO_ERROR, &pending, &length) }
        if pending != 0 { throw IOError(errno: pending, function: "connect") }
        var peer = sockaddr_storage()
        var peerLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutableBytes(of: &peer) { raw in
            getpeername(fd, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), &peerLength)
        }
        if result == 0 { return true }
        if errno == ENOTCONN { return false }
        throw IOError(errno: errno, function: "getpeername")
    }

    /// Disables Nagle's algorithm (`TCP_NODELAY`): small frames leave at once instead of waiting for an ACK.
    public static func enableNoDelay(_ fd: CInt) throws(IOError) {
        try setOption(fd, CInt(IPPROTO_TCP), TCP_NODELAY, 1, "setsockopt(TCP_NODELAY)")
    }

    /// Sets `SO_RCVBUF` and/or `SO_SNDBUF` (the kernel doubles and clamps the values).
    public static func setBufferSizes(_ fd: CInt, receive: Int? = nil, send: Int? = nil) throws(IOError) {
        if let receive { try setOption(fd, SOL_SOCKET, SO_RCVBUF, CInt(clamping: receive), "setsockopt(SO_RCVBUF)") }
        if let send { try setOption(fd, SOL_SOCKET, SO_SNDBUF, CInt(clamping: send), "setsockopt(SO_SNDBUF)") }
    }

    /// Turns `O_NONBLOCK` on or off (sockets made here are already non-blocking).
    public static func setNonBlocking(_ fd: CInt, _ enabled: Bool = true) throws(IOError) {
        let flags = try syscallValue("fcntl(F_GETFL)") { fcntl(fd, F_GETFL) }
        let updated = enabled ? flags | O_NONBLOCK : flags & ~O_NONBLOCK
        try syscallValue("fcntl(F_SETFL)") { fcntl(fd, F_SETFL, updated) }
    }

    /// The address of the peer of a connected socket.
    public static func peerAddress(_ fd: CInt) throws(IOError) -> SocketAddress {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        return try withUnsafeMutableBytes(of: &storage) { raw throws(IOError) in
            try syscallValue("getpeername") {
                getpeername(fd, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), &length)
            }
            guard let address = SocketAddress(sockaddr: UnsafeRawPointer(raw.baseAddress!)) else {
                throw IOError(errno: EAFNOSUPPORT, function: "getpeername")
            }
            return address
        }
    }

    /// The address a socket is bound to (`getsockname`).
    public static func localAddress(_ fd: CInt) throws(IOError) -> SocketAddress {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        return try withUnsafeMutableBytes(of: &storage) { raw throws(IOError) in
            try syscallValue("getsockname") {
                getsockname(fd, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), &length)
            }
            guard let address = SocketAddress(sockaddr: UnsafeRawPointer(raw.baseAddress!)) else {
                throw IOError(errno: EAFNOSUPPORT, function: "getsockname")
            }
            return address
        }
    }

    /// The local port of a bound socket (useful after binding port 0).
    public static func localPort(_ fd: CInt) throws(IOError) -> Int {
        try localAddress(fd).port
    }

    /// Reads up to `buffer.count` bytes; `.processed(0)` is end of file.
    public static func read(_ fd: CInt, into buffer: UnsafeMutableRawBufferPointer) throws(IOError) -> IOResult<Int> {
        switch try syscall("read", { Glibc.read(fd, buffer.baseAddress, buffer.count) }) {
        case .processed(let count): return .processed(count)
        case .wouldBlock: return .wouldBlock
        }
    }

    /// Writes up to `bytes.count` bytes (`send` with `MSG_NOSIGNAL`: a closed peer is `EPIPE`, not `SIGPIPE`).
    public static func write(_ fd: CInt, _ bytes: UnsafeRawBufferPointer) throws(IOError) -> IOResult<Int> {
        switch try syscall("send", { Glibc.send(fd, bytes.baseAddress, bytes.count, noSignalFlag) }) {
        case .processed(let count): return .processed(count)
        case .wouldBlock: return .wouldBlock
        }
    }

    /// Half-closes the sending side (`shutdown(SHUT_WR)`): the peer reads EOF, replies can still arrive.
    public static func shutdownWrite(_ fd: CInt) throws(IOError) {
        try syscallValue("shutdown") { Glibc.shutdown(fd, CInt(SHUT_WR)) }
    }

    /// Closes an fd. Never retried: on Linux the fd is gone even when `close` reports `EINTR`, and a retry could
    /// close an fd another thread has just been given. Deregister it from its loop first.
    public static func close(_ fd: CInt) {
        let result = Glibc.close(fd)
        precondition(result == 0 || errno != EBADF, "close(\(fd)): fd was not open")
    }

    static func setOption(
        _ fd: CInt,
        _ level: CInt,
        _ name: CInt,
        _ value: CInt,
        _ function: StaticString
    ) throws(IOError) {
        var value = value
        try syscallValue(function) { setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<CInt>.size)) }
    }
}
