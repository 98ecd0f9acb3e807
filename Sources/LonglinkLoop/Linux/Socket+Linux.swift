internal import CLonglinkLinux
import Glibc

/// The Linux-only parts of `Socket`. A Darwin port replaces this file: `socket` + `fcntl(O_NONBLOCK, FD_CLOEXEC)`,
/// `accept` + the same, `SO_NOSIGPIPE` on each socket instead of `MSG_NOSIGNAL`, and no `IP_BIND_ADDRESS_NO_PORT`
/// (Android's Bionic has all of these, like glibc).
extension Socket {
    /// A non-blocking, close-on-exec TCP socket in one call (`SOCK_NONBLOCK | SOCK_CLOEXEC`, no `fcntl` race).
    static func makeStreamSocket(family: CInt) throws(IOError) -> CInt {
        try syscallValue("socket") { socket(family, CLonglinkLinux_SOCK_STREAM_NONBLOCK_CLOEXEC(), 0) }
    }

    /// `accept4` (a GNU extension): the accepted socket is non-blocking and close-on-exec from the start.
    static func acceptNonBlocking(_ listener: CInt) throws(IOError) -> IOResult<CInt> {
        try syscall("accept4") { CLonglinkLinux_accept4(listener, nil, nil, CLonglinkLinux_SOCK_NONBLOCK_CLOEXEC()) }
    }

    /// `SO_REUSEPORT`: on Linux the kernel spreads incoming connections over every listener bound with it.
    static func enableReusePort(_ fd: CInt) throws(IOError) {
        try setOption(fd, SOL_SOCKET, SO_REUSEPORT, 1, "setsockopt(SO_REUSEPORT)")
    }

    /// `IP_BIND_ADDRESS_NO_PORT`: bind the source address now, pick the port at `connect` (per destination).
    static func enableBindAddressNoPort(_ fd: CInt) throws(IOError) {
        try setOption(fd, CInt(IPPROTO_IP), IP_BIND_ADDRESS_NO_PORT, 1, "setsockopt(IP_BIND_ADDRESS_NO_PORT)")
    }

    /// `send`/`sendmsg` flags: `MSG_NOSIGNAL`, so a closed peer is `EPIPE`, not `SIGPIPE`.
    static var noSignalFlag: CInt { CInt(MSG_NOSIGNAL) }
}
