public import LonglinkCore
import Synchronization

/// The last stored changes of the node, newest last, in a bounded ring: what a tap opened with `recent=N` shows
/// before going live. An ordinary Store observer; `contentDidChange` takes one short lock.
public final class RecentChanges: ContentObserver {
    /// How many changes are kept.
    public let capacity: Int
    private let ring: Mutex<[ContentChange]>

    /// An empty ring of `capacity` changes.
    public init(capacity: Int = 200) {
        self.capacity = max(1, capacity)
        ring = Mutex([])
    }

    public func contentDidChange(_ change: ContentChange) {
        ring.withLock { ring in
            if ring.count == capacity { ring.removeFirst() }
            ring.append(change)
        }
    }

    /// The kept changes, oldest first.
    public var changes: [ContentChange] { ring.withLock { $0 } }
}
