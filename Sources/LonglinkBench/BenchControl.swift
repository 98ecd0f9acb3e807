import Glibc
import LonglinkCore
import Synchronization

/// What every scenario shares with the command that runs it: the Ctrl-C flag, where progress goes, and bounded
/// waiting. Thread-safe.
public final class BenchControl: Sendable {
    private let interruptFlag = Atomic<Bool>(false)
    private let progressSink: (@Sendable (String) -> Void)?

    /// `progress` receives a status line about once a second (nil: no progress output).
    public init(progress: (@Sendable (String) -> Void)? = nil) {
        self.progressSink = progress
    }

    /// Asks the running scenario to stop and report what it measured (Ctrl-C).
    public func interrupt() { interruptFlag.store(true, ordering: .relaxed) }

    /// Whether `interrupt()` was called.
    public var isInterrupted: Bool { interruptFlag.load(ordering: .relaxed) }

    /// Shows a progress line.
    func progress(_ line: @autoclosure () -> String) { progressSink?(line()) }

    /// Polls `condition` every `interval` until it holds, `timeout` passes or the run is interrupted; returns
    /// whether it held.
    @discardableResult
    func wait(
        timeout: Duration,
        interval: Duration = .milliseconds(10),
        honourInterrupt: Bool = true,
        _ condition: () -> Bool
    ) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while true {
            if condition() { return true }
            if (honourInterrupt && isInterrupted) || ContinuousClock.now >= deadline { return false }
            let micros = interval.components.seconds * 1_000_000 + interval.components.attoseconds / 1_000_000_000_000
            usleep(UInt32(max(1, micros)))
        }
    }
}

/// Monotonic seconds between two `MonotonicClock` readings.
func seconds(from start: UInt64, to end: UInt64) -> Double {
    end > start ? Double(end - start) / 1e9 : 0
}
