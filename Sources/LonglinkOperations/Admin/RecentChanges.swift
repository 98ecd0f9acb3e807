public import LonglinkCore
import Synchronization

/// The last stored changes of the node, newest last, in a bounded ring: what a tap opened with `recent=N` shows
/// before going live. A Store observer registered inline (`ObserverRegistry.observeInline`): `contentDidChange`
/// takes one short lock and overwrites the oldest slot, on the committing thread, with no queue hop per commit.
public final class RecentChanges: ContentObserver {
    /// How many changes are kept.
    public let capacity: Int
    private struct Ring {
        /// Up to `capacity` changes; once full, `next` is the oldest.
        var slots: [ContentChange] = []
        var next = 0
    }

    private let ring: Mutex<Ring>

    /// An empty ring of `capacity` changes.
    public init(capacity: Int = 200) {
        self.capacity = max(1, capacity)
        ring = Mutex(Ring())
    }

    public func contentDidChange(_ change: ContentChange) {
        let capacity = self.capacity
        ring.withLock { ring in
            if ring.slots.count < capacity {
                ring.slots.append(change)
            } else {
                ring.slots[ring.next] = change
                ring.next = (ring.next + 1) % capacity
            }
        }
    }

    /// The kept changes, oldest first.
    public var changes: [ContentChange] {
        ring.withLock { ring in
            guard ring.next > 0 else { return ring.slots }
            return Array(ring.slots[ring.next...] + ring.slots[..<ring.next])
        }
    }
}
