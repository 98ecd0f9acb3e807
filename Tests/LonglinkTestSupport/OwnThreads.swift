import Foundation
public import Testing

/// Runs every job it is given on a thread of its own. Tests that block (socket reads with deadlines, `poll`, sleeps,
/// waiting for a child process) run on it through `.ownThreads`, so that they never hold one of the cooperative pool's
/// threads: the pool has one thread per core (two here), and two tests blocking both left every other running test —
/// and the awaits of the client library under test — waiting, for up to 20 s (a raw subscriber in another test was
/// then cut by the gateway's heartbeat, as if the gateway had failed).
public final class ThreadPerJobExecutor: TaskExecutor {
    /// The one instance; it keeps no state.
    public static let shared = ThreadPerJobExecutor()

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        let thread = Thread { job.runSynchronously(on: executor) }
        thread.name = "test-own-thread"
        thread.start()
    }
}

/// A trait for suites and tests whose code blocks: their test cases run on `ThreadPerJobExecutor` (task-local state,
/// so issue reporting and `withKnownIssue`, comes along; child tasks inherit it).
public struct OwnThreadsTrait: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        testCase == nil ? nil : self
    }

    public func provideScope(
        for test: Test,
        testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        try await withTaskExecutorPreference(ThreadPerJobExecutor.shared) { try await function() }
    }
}

extension Trait where Self == OwnThreadsTrait {
    /// Runs the test cases on threads of their own instead of the cooperative pool (see `ThreadPerJobExecutor`).
    public static var ownThreads: Self { OwnThreadsTrait() }
}
