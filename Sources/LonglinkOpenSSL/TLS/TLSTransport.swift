internal import CLonglinkOpenSSL
public import LonglinkCore
public import LonglinkLoop
import Glibc

/// `Transport` over TLS: OpenSSL on the connection's non-blocking socket, a decorator over the same fd a
/// `PlainTransport` would use (Redis's `tls.c` connection type, Hummingbird's `TLSChannel`).
///
/// The handshake runs on the loop like any other I/O: `handshake()` returns `.wouldBlock` until OpenSSL has what it
/// needs, and `interest` says which readiness it waits for. After the handshake, a read may need the socket
/// writable (OpenSSL must send something first, e.g. a key update answer) and a write may need it readable; each
/// such wait shows in `interest` until the operation is retried (Redis's `updateSSLEvent`). `read` drains the
/// decrypted bytes OpenSSL already holds, so no plaintext hides from the level-triggered loop.
public final class TLSTransport: Transport {
    private enum State { case connecting, handshaking, open, closed }

    /// The socket (owned: closed by `close()`).
    public let fd: CInt
    private let ssl: OpaquePointer
    /// Accepted server key digests (empty: no pinning).
    private let pins: [[UInt8]]
    private var state: State
    /// Readiness the handshake waits for.
    private var handshakeWants: SelectorEvent = []
    /// Readiness a read waits for beyond plain readability (`.write` after `SSL_ERROR_WANT_WRITE`).
    private var readWants: SelectorEvent = []
    /// Readiness a write waits for beyond plain writability (`.read` after `SSL_ERROR_WANT_READ`).
    private var writeWants: SelectorEvent = []
    private let readSize: Int
    /// The socket error (a reset) a read or write met: OpenSSL fails every later call on this `SSL` without one.
    private var socketFailure: IOError?

    /// Wraps `fd` with a new `SSL` from `context`. `serverName` (clients) sets SNI and the name the server's
    /// certificate must match (a DNS name or an IP address). A client context that resumes sessions offers the
    /// one saved in `sessionSlot` (made for the same name) and saves the server's new ticket there.
    init(fd: CInt, context: SSLContextHandle, role: TransportRole, readSize: Int, sessionSlot: Int = 0) throws(TransportError) {
        guard let ssl = SSL_new(context.context) else {
            throw TransportError(kind: .protocolFailure, reason: "SSL_new: \(OpenSSLErrors.last())")
        }
        self.ssl = ssl
        self.pins = context.pins
        self.fd = fd
        self.readSize = readSize
        switch role {
        case .accepted:
            state = .handshaking
            SSL_set_accept_state(ssl)
        case .connecting(let serverName):
            state = .connecting
            SSL_set_connect_state(ssl)
            if let serverName, !serverName.isEmpty, CLonglinkOpenSSL_set_server_name(ssl, serverName) != 1 {
                SSL_free(ssl)
                throw TransportError(kind: .protocolFailure, reason: "invalid server name '\(serverName)'")
            }
            if context.resumesSessions && CLonglinkOpenSSL_offer_session(ssl, sessionSlot) < 0 {
                SSL_free(ssl)
                throw TransportError(kind: .protocolFailure, reason: "cannot offer the saved TLS session: \(OpenSSLErrors.last())")
            }
        }
        guard CLonglinkOpenSSL_set_fd_nosigpipe(ssl, fd) == 1 else {
            SSL_free(ssl)
            throw TransportError(kind: .protocolFailure, reason: "cannot attach the socket: \(OpenSSLErrors.last())")
        }
    }

    deinit {
        if state != .closed {
            SSL_free(ssl)
            Socket.close(fd)
        }
    }

    public var interest: SelectorEvent {
        switch state {
        case .connecting: .write
        case .handshaking: handshakeWants
        case .open: readWants.union(writeWants)
        case .closed: []
        }
    }

    /// The negotiated protocol, e.g. `TLSv1.3` (empty before the handshake).
    public var protocolVersion: String {
        guard state == .open, let name = SSL_get_version(ssl) else { return "" }
        return String(cString: name)
    }

    /// Whether the handshake resumed a session from a ticket (abbreviated: no certificate, no signature); false
    /// before the handshake finished.
    public var tlsSessionResumed: Bool? { state == .open && CLonglinkOpenSSL_session_reused(ssl) == 1 }

    /// Whether the peer presented a certificate that verified (servers with client-certificate verification).
    public var peerCertificateVerified: Bool {
        guard state == .open, let certificate = SSL_get1_peer_certificate(ssl) else { return false }
        X509_free(certificate)
        return SSL_get_verify_result(ssl) == X509_V_OK
    }

    public func handshake() throws(TransportError) -> IOResult<Void> {
        switch state {
        case .open: return .processed(())
        case .closed: throw .closed
        case .connecting:
            do {
                guard try Socket.finishConnect(fd) else { return .wouldBlock }
            } catch {
                throw .io(error)
            }
            state = .handshaking
            return try handshake()
        case .handshaking:
            ERR_clear_error()
            let result = SSL_do_handshake(ssl)
            if result == 1 {
                try checkPin()
                state = .open
                handshakeWants = []
                return .processed(())
            }
            switch SSL_get_error(ssl, result) {
            case SSL_ERROR_WANT_READ:
                handshakeWants = .read
                return .wouldBlock
            case SSL_ERROR_WANT_WRITE:
                handshakeWants = .write
                return .wouldBlock
            case let code:
                throw failure("handshake", code: code)
            }
        }
    }

    public func read(into buffer: inout ByteBuffer) throws(TransportError) -> IOResult<Int> {
        guard state == .open else { throw .closed }
        if let socketFailure { throw .io(socketFailure) }
        readWants = []
        var total = 0
        while true {
            var errorCode: CInt = 0
            var readErrno: CInt = 0
            let ssl = self.ssl
            let wanted = buffer.writableBytes >= 1024 ? 1024 : readSize
            let count = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: wanted) { raw in
                ERR_clear_error()
                Glibc.errno = 0
                var count = 0
                let result = SSL_read_ex(ssl, raw.baseAddress, raw.count, &count)
                if result == 1 { return count }
                readErrno = Glibc.errno
                errorCode = SSL_get_error(ssl, result)
                return 0
            }
            if errorCode == 0 {
                // Got bytes (SSL_read_ex never succeeds with zero). Drain what OpenSSL already decrypted: the
                // socket may be empty, and level-triggered epoll would not fire for bytes held in user space.
                total += count
                if SSL_pending(ssl) > 0 { continue }
                return .processed(total)
            }
            switch errorCode {
            case SSL_ERROR_WANT_READ:
                return total > 0 ? .processed(total) : .wouldBlock
            case SSL_ERROR_WANT_WRITE:
                readWants = .write
                return total > 0 ? .processed(total) : .wouldBlock
            case SSL_ERROR_ZERO_RETURN:
                return .processed(total)
            case SSL_ERROR_SYSCALL where readErrno == 0:
                // The socket ended without an error and without close_notify (OpenSSL 3 reports a truncation as
                // SSL_ERROR_SSL unless told to ignore it): the end of the stream.
                _ = OpenSSLErrors.last()
                return .processed(total)
            case let code where Self.isSocketFailure(code, errno: readErrno):
                // A reset (ECONNRESET) or another socket error: an io error, as PlainTransport reports it. OpenSSL
                // refuses every later call on this SSL, so the error is kept for them.
                _ = OpenSSLErrors.last()
                let error = IOError(errno: readErrno, function: "SSL_read")
                socketFailure = error
                if total > 0 { return .processed(total) }
                throw .io(error)
            case let code:
                if total > 0 { return .processed(total) }
                throw failure("read", code: code)
            }
        }
    }

    public func write(_ queue: inout OutboundQueue) throws(TransportError) -> IOResult<Int> {
        guard state == .open else { throw .closed }
        if let socketFailure { throw .io(socketFailure) }
        writeWants = []
        var total = 0
        while !queue.isEmpty {
            // Coalesce queued frames into one TLS record (up to 16 KiB): one record and one syscall for many small
            // pushes. A retry after WANT_WRITE presents at least the same bytes, as OpenSSL requires: the front of
            // the queue is only consumed by what SSL_write_ex reports written.
            var errorCode: CInt = 0
            var writeErrno: CInt = 0
            let ssl = self.ssl
            let written = withUnsafeTemporaryAllocation(byteCount: 16 * 1024, alignment: 16) { scratch -> Int in
                let count = queue.copyFront(into: scratch)
                ERR_clear_error()
                Glibc.errno = 0
                var written = 0
                let result = SSL_write_ex(ssl, scratch.baseAddress, count, &written)
                if result == 1 { return written }
                writeErrno = Glibc.errno
                errorCode = SSL_get_error(ssl, result)
                return 0
            }
            if errorCode == 0 {
                queue.consume(written)
                total += written
                continue
            }
            switch errorCode {
            case SSL_ERROR_WANT_WRITE:
                return total > 0 ? .processed(total) : .wouldBlock
            case SSL_ERROR_WANT_READ:
                writeWants = .read
                return total > 0 ? .processed(total) : .wouldBlock
            case let code where Self.isSocketFailure(code, errno: writeErrno):
                _ = OpenSSLErrors.last()
                let error = IOError(errno: writeErrno, function: "SSL_write")
                socketFailure = error
                throw .io(error)
            case let code:
                throw failure("write", code: code)
            }
        }
        return .processed(total)
    }

    /// Sends `close_notify` if the handshake finished (best effort, never waits), frees the `SSL` and closes the fd.
    public func close() {
        guard state != .closed else { return }
        if state == .open {
            ERR_clear_error()
            _ = SSL_shutdown(ssl)
            ERR_clear_error()
        }
        state = .closed
        SSL_free(ssl)
        Socket.close(fd)
    }

    /// Whether a failed `SSL_read_ex`/`SSL_write_ex` (not a want-read/want-write) failed in the socket:
    /// `SSL_ERROR_SYSCALL` with an errno, or another code with the socket's `EPIPE`/`ECONNRESET` (OpenSSL 3 says
    /// `SSL_ERROR_ZERO_RETURN` for a write to a peer that sent close_notify and then reset the connection).
    private static func isSocketFailure(_ code: CInt, errno: CInt) -> Bool {
        switch code {
        case SSL_ERROR_SYSCALL: errno != 0
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: false
        default: errno == EPIPE || errno == ECONNRESET
        }
    }

    /// After a verified handshake: the server's public key must be one of the pins (when there are pins).
    private func checkPin() throws(TransportError) {
        guard !pins.isEmpty else { return }
        var digest = [UInt8](repeating: 0, count: 32)
        let hashed = CLonglinkOpenSSL_peer_spki_sha256(ssl, &digest) == 1
        guard hashed, pins.contains(digest) else {
            _ = OpenSSLErrors.last()
            throw TransportError(
                kind: .protocolFailure,
                reason: hashed ? "TLS handshake failed: server public key SHA-256 \(Self.hex(digest)) is not pinned" : "TLS handshake failed: no server certificate to check against the pins",
                tlsCause: .pinMismatch
            )
        }
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
    }

    /// A typed error for a failed OpenSSL call, with the certificate check's reason when that is what failed.
    private func failure(_ operation: String, code: CInt) -> TransportError {
        let savedErrno = Glibc.errno
        let verify = SSL_get_verify_result(ssl)
        let cause = TLSFailureClassifier.cause(verifyResult: verify, errorReason: TLSFailureClassifier.queuedErrorReason())
        var reason = OpenSSLErrors.last()
        if verify != X509_V_OK, let text = X509_verify_cert_error_string(Int(verify)) {
            reason += " (certificate: \(String(cString: text)))"
        }
        if code == SSL_ERROR_SYSCALL {
            if savedErrno != 0 {
                return .io(IOError(errno: savedErrno, function: "SSL_\(operation)"))
            }
            reason = "connection closed during TLS \(operation)"
        }
        return TransportError(
            kind: .protocolFailure,
            reason: "TLS \(operation) failed: \(reason)",
            tlsCause: code == SSL_ERROR_SYSCALL ? nil : cause
        )
    }
}

@available(*, unavailable)
extension TLSTransport: Sendable {}
