/// A host name did not resolve (`getaddrinfo` failed): the name does not exist, or the resolver could not answer.
public struct HostLookupError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The name looked up.
    public let host: String
    /// The resolver's words (`gai_strerror`), e.g. "Name or service not known".
    public let reason: String
    /// The resolver could not answer now (`EAI_AGAIN`: no network, DNS server down); a later lookup may work.
    public let isTemporary: Bool
    /// An `errno` for callers that report it as an `IOError` (`EHOSTUNREACH`, or the system error).
    public let errno: CInt

    /// Creates an error.
    public init(host: String, reason: String, isTemporary: Bool, errno: CInt) {
        self.host = host
        self.reason = reason
        self.isTemporary = isTemporary
        self.errno = errno
    }

    public var description: String { "host not found: \(host) (\(reason))" }
}
