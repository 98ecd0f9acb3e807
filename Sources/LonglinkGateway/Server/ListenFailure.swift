public import LonglinkLoop
import Glibc

/// A listening socket could not be opened: the address, and the system's reason, in words an operator acts on.
public struct ListenFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// `host:port` as configured.
    public let address: String
    /// The failed call.
    public let error: IOError

    /// Creates a failure for `address`.
    public init(address: String, error: IOError) {
        self.address = address
        self.error = error
    }

    /// Whether another socket already listens there (`EADDRINUSE`).
    public var addressInUse: Bool { error.errno == EADDRINUSE }

    public var description: String {
        if addressInUse {
            return "cannot listen on \(address): address already in use (another process listens there: a second gateway?)"
        }
        return "cannot listen on \(address): \(error.reason) (\(error.function))"
    }
}
