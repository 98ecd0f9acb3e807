import Foundation
import Synchronization

/// Where a command writes: the real stdout/stderr, or buffers a test reads back. Thread-safe.
public final class CommandIO: Sendable {
    private enum Target: Sendable {
        case standardStreams
        case capture
    }

    private let target: Target
    private let captured = Mutex<(out: String, err: String)>(("", ""))
    /// Whether stdout is a terminal (progress lines, colours).
    public let stdoutIsTerminal: Bool

    private init(target: Target, stdoutIsTerminal: Bool) {
        self.target = target
        self.stdoutIsTerminal = stdoutIsTerminal
    }

    /// The process's stdout and stderr.
    public static func standard() -> CommandIO {
        CommandIO(target: .standardStreams, stdoutIsTerminal: isatty(1) == 1)
    }

    /// Buffers for tests.
    public static func capturing() -> CommandIO { CommandIO(target: .capture, stdoutIsTerminal: false) }

    /// Writes a line to stdout.
    public func out(_ line: String) { write(line + "\n", toError: false) }
    /// Writes a line to stderr.
    public func err(_ line: String) { write(line + "\n", toError: true) }
    /// Writes text to stdout without a newline (progress lines).
    public func outRaw(_ text: String) { write(text, toError: false) }

    /// What was written to stdout (capturing IO only).
    public var capturedOut: String { captured.withLock { $0.out } }
    /// What was written to stderr (capturing IO only).
    public var capturedErr: String { captured.withLock { $0.err } }

    private func write(_ text: String, toError: Bool) {
        switch target {
        case .standardStreams:
            var bytes = Array(text.utf8)
            let fd: Int32 = toError ? 2 : 1
            var offset = 0
            while offset < bytes.count {
                let n = bytes.withUnsafeMutableBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
                if n <= 0 {
                    if n < 0 && errno == EINTR { continue }
                    return
                }
                offset += n
            }
        case .capture:
            captured.withLock {
                if toError { $0.err += text } else { $0.out += text }
            }
        }
    }
}
