import Synchronization

/// The pushes committed for one loop's subscribers, in commit order, waiting for that loop to take them.
///
/// Whichever thread commits appends (the loop itself when the store commits on its caller, the Store writer, a
/// broker's thread); the loop takes everything at once before it sleeps, so a commit costs the loop no job, no
/// closure and no allocation. Only an append from another thread that finds the inbox idle asks the loop to look
/// (`append` returns true: the caller posts one job): the loop's own appends are always taken by its next
/// before-sleep step, which comes before it waits.
final class PushInbox: Sendable {
    private struct State {
        var pushes: [EncodedPush] = []
        /// A job to take the pushes is posted and has not run yet.
        var called = false
    }

    private let state = Mutex(State())

    /// Appends what `body` appends (under the inbox's lock). True when the loop must be asked to take them: the
    /// caller is not on the loop, and no take is pending.
    func append(fromLoop onLoop: Bool, _ body: (inout [EncodedPush]) -> Void) -> Bool {
        state.withLock { state -> Bool in
            body(&state.pushes)
            guard !onLoop, !state.called, !state.pushes.isEmpty else { return false }
            state.called = true
            return true
        }
    }

    /// Moves the waiting pushes into `batch` (an empty array whose capacity is reused); false when none waited.
    func take(into batch: inout [EncodedPush]) -> Bool {
        state.withLock { state -> Bool in
            state.called = false
            guard !state.pushes.isEmpty else { return false }
            swap(&state.pushes, &batch)
            return true
        }
    }
}
