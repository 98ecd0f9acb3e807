/// Why a Redis command or connection failed.
public enum RedisError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The connection could not be made (refused, unreachable, timed out).
    case connect(String)
    /// Reading or writing the socket failed, or the server closed the connection.
    case io(String)
    /// The bytes from the server are not valid RESP.
    case protocolViolation(String)
    /// The server answered with an error reply (`-ERR ...`, `-WRONGTYPE ...`).
    case server(String)
    /// The reply had a shape the caller did not expect.
    case unexpectedReply(String)
    /// The connection was closed before the reply came (or the command was sent after `close()`).
    case closed
    /// A Redis Cluster could not serve the command in time: no master for its slot (a failover under way), or
    /// redirections that did not settle. Retrying later may work.
    case cluster(String)

    public var description: String {
        switch self {
        case .connect(let why): "RedisError: cannot connect: \(why)"
        case .io(let why): "RedisError: I/O: \(why)"
        case .protocolViolation(let why): "RedisError: protocol: \(why)"
        case .server(let message): "RedisError: server: \(message)"
        case .unexpectedReply(let why): "RedisError: unexpected reply: \(why)"
        case .closed: "RedisError: connection closed"
        case .cluster(let why): "RedisError: cluster: \(why)"
        }
    }
}
