/// Where a record sits in an order's history: the store's epoch plus a per-order offset.
///
/// Offsets start at 1 and strictly increase per order. The epoch names one continuous history: a store
/// that loses history (a wiped database, a flushed Redis) starts a new epoch, so a client holding a position
/// from the old epoch learns it cannot be recovered (`recovered = false`) instead of silently missing records.
public struct StreamPosition: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The store's history generation.
    public var epoch: UInt32
    /// The record's offset within its order's history (0 = before the first record).
    public var offset: UInt64

    public init(epoch: UInt32, offset: UInt64) {
        self.epoch = epoch
        self.offset = offset
    }

    /// The position before any record, in no particular epoch.
    public static let zero = StreamPosition(epoch: 0, offset: 0)

    public var description: String { "\(epoch):\(offset)" }

    public static func < (lhs: StreamPosition, rhs: StreamPosition) -> Bool {
        (lhs.epoch, lhs.offset) < (rhs.epoch, rhs.offset)
    }
}
