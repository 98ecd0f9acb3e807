/// A hash index from order id to a slot number, for `MemoryLineTable`: open addressing with linear probing over
/// the id's precomputed `textHash` (no rehashing of the text, no Hasher rounds), the hashes kept in their own
/// array so a probe compares words and touches an id only when its hash matches. Removal shifts later entries
/// back (no tombstones). Grows at 50 % load.
struct OrderSlotIndex {
    /// The hash of each bucket's id; 0 marks an empty bucket (a real hash of 0 is stored as 1).
    private var hashes: [UInt64]
    private var ids: [OrderID?]
    private var slots: [Int32]
    private var mask: Int
    /// How many ids the index holds.
    private(set) var count = 0

    init() {
        hashes = Array(repeating: 0, count: 16)
        ids = Array(repeating: nil, count: 16)
        slots = Array(repeating: 0, count: 16)
        mask = 15
    }

    /// Every id in the index, in no particular order.
    var keys: [OrderID] { ids.compactMap { $0 } }

    /// The slot of `id`, or nil.
    func slot(of id: OrderID) -> Int? {
        let hash = Self.stored(id.textHash)
        var bucket = Int(truncatingIfNeeded: hash) & mask
        while true {
            let found = hashes[bucket]
            if found == 0 { return nil }
            if found == hash, ids[bucket] == id { return Int(slots[bucket]) }
            bucket = (bucket + 1) & mask
        }
    }

    /// Sets the slot of `id` (adding the id when new).
    mutating func set(_ slot: Int, for id: OrderID) {
        if (count + 1) * 2 > hashes.count { grow() }
        let hash = Self.stored(id.textHash)
        var bucket = Int(truncatingIfNeeded: hash) & mask
        while hashes[bucket] != 0 {
            if hashes[bucket] == hash, ids[bucket] == id {
                slots[bucket] = Int32(slot)
                return
            }
            bucket = (bucket + 1) & mask
        }
        hashes[bucket] = hash
        ids[bucket] = id
        slots[bucket] = Int32(slot)
        count += 1
    }

    /// Removes `id`; entries probed past it move back so every remaining id stays reachable.
    mutating func remove(_ id: OrderID) {
        let hash = Self.stored(id.textHash)
        var bucket = Int(truncatingIfNeeded: hash) & mask
        while true {
            if hashes[bucket] == 0 { return }
            if hashes[bucket] == hash, ids[bucket] == id { break }
            bucket = (bucket + 1) & mask
        }
        var hole = bucket
        var next = (hole + 1) & mask
        while hashes[next] != 0 {
            let home = Int(truncatingIfNeeded: hashes[next]) & mask
            // Move `next` into the hole unless its home lies cyclically in (hole, next].
            let homeAfterHole = (home - hole - 1) & mask
            let nextAfterHole = (next - hole - 1) & mask
            if homeAfterHole > nextAfterHole {
                hashes[hole] = hashes[next]
                ids[hole] = ids[next]
                slots[hole] = slots[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        hashes[hole] = 0
        ids[hole] = nil
        count -= 1
    }

    private mutating func grow() {
        let old = (hashes, ids, slots)
        let capacity = hashes.count * 2
        hashes = Array(repeating: 0, count: capacity)
        ids = Array(repeating: nil, count: capacity)
        slots = Array(repeating: 0, count: capacity)
        mask = capacity - 1
        count = 0
        for bucket in old.0.indices where old.0[bucket] != 0 {
            if let id = old.1[bucket] { set(Int(old.2[bucket]), for: id) }
        }
    }

    private static func stored(_ hash: UInt64) -> UInt64 { hash == 0 ? 1 : hash }
}
