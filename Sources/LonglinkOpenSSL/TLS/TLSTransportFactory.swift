public import LonglinkLoop

/// Makes `TLSTransport`s from the current `TLSContext` (the `transport = tls` toggle). After `context.reload()`,
/// new connections use the new certificate; open ones keep theirs.
public struct TLSTransportFactory: TransportFactory {
    /// TLS transports encrypt.
    public var isEncrypted: Bool { true }

    /// The context new transports are made from.
    public let context: TLSContext
    /// Bytes made writable in the inbound buffer before a read when it has less than 1 KiB free.
    public var readSize: Int
    /// Sets `TCP_NODELAY` on every socket.
    public var noDelay: Bool
    /// For outgoing connections without a server name in their role: the name the certificate must match.
    public var defaultServerName: String?

    /// Creates the factory.
    public init(context: TLSContext, readSize: Int = 16 * 1024, noDelay: Bool = true, defaultServerName: String? = nil) {
        self.context = context
        self.readSize = readSize
        self.noDelay = noDelay
        self.defaultServerName = defaultServerName
    }

    /// A transport; an outgoing one keeps its session in slot 0 (a client library has one server).
    public func makeTransport(fd: CInt, role: TransportRole) throws(TransportError) -> any Transport {
        try makeTransport(fd: fd, role: role, sessionSlot: 0)
    }

    /// A transport whose outgoing connection offers the session saved in `sessionSlot` and saves its new one
    /// there (when the context's configuration has `resumesSessions`).
    public func makeTransport(fd: CInt, role: TransportRole, sessionSlot: Int) throws(TransportError) -> any Transport {
        if noDelay {
            do { try Socket.enableNoDelay(fd) } catch { throw .io(error) }
        }
        var role = role
        if case .connecting(let name) = role, name == nil { role = .connecting(serverName: defaultServerName) }
        return try TLSTransport(fd: fd, context: context.handle, role: role, readSize: readSize, sessionSlot: sessionSlot)
    }
}
