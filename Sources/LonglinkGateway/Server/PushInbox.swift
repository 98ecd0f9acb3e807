import LonglinkCore
import Synchronization

/// The pushes committed for one loop's subscribers, in commit order, waiting for that loop to take them.
///
/// Whichever thread commits appends (the loop itself when the store commits on its caller, the Store writer, a
/// broker's thread); the loop takes everything at once before it sleeps, so a commit costs the loop no job, no
/// closure and no allocation. Only an append from another thread that finds the inbox idle asks the loop to look
/// (`append` returns true: the caller posts one job): the loop's own appends are always taken by its next
/// before-sleep step, which comes before it waits. A broker's "I may have missed records of these routes" travels
/// the same way (`appendDrop`), so the subscribers are dropped before any push the broker delivered after it.
final class PushInbox: Sendable {
    private struct State {
        var pushes: [EncodedPush] = []
        /// Routes whose subscribers must be dropped (the broker may have missed their records), each with the
        /// number of pushes appended before it: they are handled in that order with the pushes.
        var drops: [Drop] = []
        /// A job to take the pushes is posted and has not run yet.
        var called = false
    }

    /// Routes to drop the subscribers of, after the first `after` pushes of the same take.
    struct Drop {
        let after: Int
        let routes: [Route]
    }

    private let state = Mutex(State())

    /// Appends what `body` appends (under the inbox's lock). True when the loop must be asked to take them: the
    /// caller is not on the loop, and no take is pending.
    func append(fromLoop onLoop: Bool, _ body: (inout [EncodedPush]) -> Void) -> Bool {
        state.withLock { state -> Bool in
            body(&state.pushes)
            return Self.mustCall(&state, fromLoop: onLoop)
        }
    }

    /// Queues a drop of `routes`' subscribers behind the pushes already waiting (a push the broker delivers after
    /// it reaches them only after the drop, as a reconnect's recovery expects). True as for `append`.
    func appendDrop(of routes: [Route], fromLoop onLoop: Bool) -> Bool {
        state.withLock { state -> Bool in
            state.drops.append(Drop(after: state.pushes.count, routes: routes))
            return Self.mustCall(&state, fromLoop: onLoop)
        }
    }

    /// Moves the waiting pushes into `batch` and the waiting drops into `drops` (empty arrays whose capacity is
    /// reused); false when nothing waited.
    func take(into batch: inout [EncodedPush], drops: inout [Drop]) -> Bool {
        state.withLock { state -> Bool in
            state.called = false
            guard !state.pushes.isEmpty || !state.drops.isEmpty else { return false }
            swap(&state.pushes, &batch)
            swap(&state.drops, &drops)
            return true
        }
    }

    private static func mustCall(_ state: inout State, fromLoop onLoop: Bool) -> Bool {
        guard !onLoop, !state.called, !state.pushes.isEmpty || !state.drops.isEmpty else { return false }
        state.called = true
        return true
    }
}
