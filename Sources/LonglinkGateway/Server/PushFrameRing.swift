import LonglinkCore
import Synchronization

/// Push frames whose storage is used again: the fan-out encodes each record's push into the next frame of a ring,
/// and a frame that every subscriber has flushed since the ring last used it (the ring holds the only reference)
/// is rewritten in place, with no allocation and no free. A frame a subscriber still holds (a slow reader's queue,
/// a batch in flight on another loop) is left to it: the slot gets new storage, as every push did before.
///
/// One ring per loop (`LoopPort.frames`), used only by the thread running that loop when it commits, and one for
/// the other threads (the Store writer, a broker's thread) in `GatewayDelivery`; the lock is uncontended on a loop.
/// A frame is allocated on the thread that encodes it and, in the steady state, never freed: no cross-thread free
/// takes the allocator's arena lock on the loop that flushed it. Memory: `slots` frames of at most `largestKept`
/// bytes of capacity per ring (a larger frame is handed out and not kept).
final class PushFrameRing: Sendable {
    /// Frames per ring: a few commit batches (at most 64 records each when a loop commits) in flight.
    static let defaultSlots = 256
    /// The largest capacity a slot keeps (a rare large payload does not pin its storage in the ring).
    static let largestKept = 1_024

    /// The frames, and where the next push goes.
    struct Frames {
        fileprivate var slots: [[UInt8]]
        fileprivate var next = 0
        /// The fan-out's scratch for a batch that several loops share (which loops want each record, and each
        /// record's push), kept with the ring so a batch allocates neither array. Empty between batches: a push
        /// left here would hold its frame, which the ring could then not reuse.
        var loopMasks: [UInt64] = []
        var pushes: [EncodedPush?] = []

        /// The push of `record`, written into the next slot (in place when nobody else holds that slot's
        /// storage). Throws what `FrameCodec.encodePush` throws; the slot is then unchanged.
        mutating func push(of record: OrderChangeRecord, with codec: any FrameCodec) throws(FrameError) -> [UInt8] {
            let slot = next
            next = slot + 1 == slots.count ? 0 : slot + 1
            try codec.encodePush(of: record, into: &slots[slot])
            let frame = slots[slot]
            if frame.capacity > PushFrameRing.largestKept { slots[slot] = [] }
            return frame
        }
    }

    private let frames: Mutex<Frames>

    init(slots: Int = PushFrameRing.defaultSlots) {
        frames = Mutex(Frames(slots: Array(repeating: [], count: max(1, slots))))
    }

    /// The bytes of storage the ring keeps for reuse (its slots' capacities; at most `slots × largestKept`).
    var keptCapacity: Int {
        frames.withLock { $0.slots.reduce(0) { $0 + $1.capacity } }
    }

    /// Runs `body` with the ring (encode a batch's pushes in one hold of the lock).
    @inline(__always)
    func withFrames<R: Sendable, E: Error>(_ body: (inout Frames) throws(E) -> R) throws(E) -> R {
        try frames.withLock { (frames) throws(E) -> R in try body(&frames) }
    }
}
