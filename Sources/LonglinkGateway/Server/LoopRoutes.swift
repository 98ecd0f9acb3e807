import LonglinkCore
import Synchronization

/// Which loops hold subscribers of which routes, so that a commit wakes only the loops it has pushes for.
///
/// A loop adds its bit for a route when the route gets its first subscriber on that loop, before it asks the broker
/// for the route and before it reads the subscriber's snapshot, and removes it when the route's last subscriber on
/// that loop leaves: every record committed after a snapshot read finds the bit (the table's lock orders the two),
/// so snapshot-then-pushes keeps its no-gap promise. Keyed by `RouteKey.filterDigest` (no route text per record, 8
/// bytes a route instead of a 56-byte key: memory per connection is a budget). Two routes share a digest only by a
/// 64-bit collision; while both were held on a loop, the last subscriber of one leaving would clear the loop's bit
/// for the other too. Loops beyond
/// the 64th are not tracked: with more loops than that, every loop gets every batch, as before.
final class LoopRoutes: Sendable {
    /// Loop masks by route; line-wide routes (`order://taxi/*`) are in it under their line-wide key.
    private struct State {
        var masks = DigestMap<UInt64>()
        /// Line-wide routes in `masks`: while 0, a record is looked up once.
        var lineWide = 0
    }

    private let state = Mutex(State())
    /// Whether masks are tracked (at most 64 loops).
    let tracks: Bool

    init(loopCount: Int) { self.tracks = loopCount <= 64 }

    /// Loop `loop` now has a subscriber of `route` (its first there).
    func add(_ route: Route, loop: Int) {
        guard tracks else { return }
        let key = RouteKey(route)
        state.withLock { state in
            let old = state.masks[key.filterDigest] ?? 0
            if old == 0 && key.isLineWide { state.lineWide += 1 }
            state.masks[key.filterDigest] = old | (1 << UInt64(loop))
        }
    }

    /// Loop `loop` has no subscriber of `route` left.
    func remove(_ route: Route, loop: Int) {
        guard tracks else { return }
        let key = RouteKey(route)
        state.withLock { state in
            guard let old = state.masks[key.filterDigest] else { return }
            let mask = old & ~(1 << UInt64(loop))
            if mask == 0 {
                state.masks[key.filterDigest] = nil
                if key.isLineWide { state.lineWide -= 1 }
            } else {
                state.masks[key.filterDigest] = mask
            }
        }
    }

    /// The loops with subscribers of each record's route (`masks[i]` for `records[i]`), under one lock.
    func masks(for records: some Sequence<OrderChangeRecord>, into masks: inout [UInt64]) {
        state.withLock { state in
            for record in records {
                var mask = state.masks[RouteKey.filterDigest(of: record)] ?? 0
                if state.lineWide > 0 { mask |= state.masks[RouteKey.lineWideFilterDigest(of: record)] ?? 0 }
                masks.append(mask)
            }
        }
    }
}
