import Glibc
public import LonglinkLoop

/// Client sockets for test peers on 127.0.0.1.
public enum LoopbackSocket {
    /// A blocking TCP socket connected to 127.0.0.1:`port` (the connect waits at most 5 s).
    ///
    /// `receiveBuffer` (`SO_RCVBUF`) is set before `connect`, as tcp(7) requires: Linux sizes a connection's
    /// receive window at the handshake, and a buffer shrunk afterwards is smaller than the window already
    /// advertised. The kernel then drops the segments that do not fit, and the sender retransmits them on a
    /// timer that backs off while the reader stalls (14 s after a 40 s stall on this machine): a stalled reader
    /// that resumes would see nothing for seconds, although the server wrote everything.
    public static func connect(port: Int, receiveBuffer: Int? = nil) throws(IOError) -> CInt {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw IOError(errno: errno, function: "socket") }
        do throws(IOError) {
            if let receiveBuffer { try Socket.setBufferSizes(fd, receive: receiveBuffer) }
            let result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            if result != 0 {
                guard errno == EINPROGRESS || errno == EINTR else { throw IOError(errno: errno, function: "connect") }
                var pfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                guard poll(&pfd, 1, 5_000) > 0 else { throw IOError(errno: ETIMEDOUT, function: "connect") }
                guard try Socket.finishConnect(fd) else { throw IOError(errno: ENOTCONN, function: "connect") }
            }
            try Socket.setNonBlocking(fd, false)
            return fd
        } catch {
            Glibc.close(fd)
            throw error
        }
    }
}
