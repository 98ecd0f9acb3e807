import LonglinkCore
import Synchronization

/// The results of one loop's publishes as the Store completes them (on the writer's thread, or on a loop that
/// commits its queue itself), handed to the loop as one job per batch instead of one job per publish.
///
/// `add` reports when the list was empty: the caller then posts the job that `take`s everything completed by the
/// time it runs. A result added after that `take` finds the list empty again and posts the next job, so none waits.
final class PublishResults: Sendable {
    /// One completed publish: which connection asked, its request id and the Store's answer.
    struct Completed: Sendable {
        let connectionID: UInt64
        let requestID: UInt32
        let result: Result<AppliedChange, StoreError>
    }

    private let pending = Mutex<[Completed]>([])

    /// Appends a result in completion order; true when it is the first since the last `take` (post the job).
    func add(_ completed: Completed) -> Bool {
        pending.withLock { list in
            list.append(completed)
            return list.count == 1
        }
    }

    /// Moves the pending results into `batch` (an empty array whose capacity is reused), oldest first.
    func take(into batch: inout [Completed]) {
        pending.withLock { list in swap(&list, &batch) }
    }
}
