/// A mistake in how a command was invoked or configured: printed to stderr, exit code 2.
public struct CommandLineError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong, phrased for the person who typed it.
    public var message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}

/// A command failed for a reason that is not a usage mistake (unreachable server, refused publish, ...):
/// printed to stderr with the given exit code.
public struct CommandFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// What failed.
    public var message: String
    /// The process exit code (≥ 1).
    public var exitCode: Int32

    public init(_ message: String, exitCode: Int32 = 1) {
        self.message = message
        self.exitCode = exitCode
    }

    public var description: String { message }
}
