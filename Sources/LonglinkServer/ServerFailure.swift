/// A gateway that could not start, or a setting it could not use (a store that does not open, an address in use,
/// an unreachable Redis): the message for the operator, and the exit code `longlink serve` ends with.
public struct ServerFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// What failed, phrased for the operator.
    public var message: String
    /// The process exit code (≥ 1): 2 for a setting that cannot work (an unreadable file, a refused password).
    public var exitCode: Int32

    public init(_ message: String, exitCode: Int32 = 1) {
        self.message = message
        self.exitCode = exitCode
    }

    public var description: String { message }
}
