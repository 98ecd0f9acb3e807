/// A hash index from order id to a slot number, for `MemoryLineTable`: open addressing with linear probing over
/// the id's precomputed `textHash` (no rehashing of the text, no Hasher rounds). A bucket is 16 bytes (hash and
/// slot), so a probe reads one cache line; the index keeps no ids: the caller confirms a hash match against the
/// order in the slot, which it reads next anyway. Removal shifts later entries back (no tombstones). Grows at
/// 50 % load.
struct OrderSlotIndex {
    private struct Bucket {
        /// The id's hash; 0 marks an empty bucket (a real hash of 0 is stored as 1).
        var hash: UInt64
        var slot: Int32
    }

    private var buckets: [Bucket]
    private var mask: Int
    /// How many ids the index holds.
    private(set) var count = 0

    init() {
        buckets = Array(repeating: Bucket(hash: 0, slot: 0), count: 16)
        mask = 15
    }

    /// The slot of `id`: the first slot under its hash for which `isID` confirms the id.
    func slot(of id: OrderID, isID: (Int) -> Bool) -> Int? {
        let hash = Self.stored(id.textHash)
        var index = Int(truncatingIfNeeded: hash) & mask
        while true {
            let bucket = buckets[index]
            if bucket.hash == 0 { return nil }
            if bucket.hash == hash, isID(Int(bucket.slot)) { return Int(bucket.slot) }
            index = (index + 1) & mask
        }
    }

    /// Adds `id` at `slot`; the id must not be in the index.
    mutating func insert(_ id: OrderID, at slot: Int) {
        if (count + 1) * 2 > buckets.count { grow() }
        place(Bucket(hash: Self.stored(id.textHash), slot: Int32(slot)))
        count += 1
    }

    /// Changes the slot of `id` from `old` to `new`.
    mutating func move(_ id: OrderID, from old: Int, to new: Int) {
        guard let index = bucketIndex(of: id, slot: old) else { return }
        buckets[index].slot = Int32(new)
    }

    /// Removes `id` (at `slot`); entries probed past it move back so every remaining id stays reachable.
    mutating func remove(_ id: OrderID, at slot: Int) {
        guard var hole = bucketIndex(of: id, slot: slot) else { return }
        var next = (hole + 1) & mask
        while buckets[next].hash != 0 {
            let home = Int(truncatingIfNeeded: buckets[next].hash) & mask
            // Move `next` into the hole unless its home lies cyclically in (hole, next].
            if (home - hole - 1) & mask > (next - hole - 1) & mask {
                buckets[hole] = buckets[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        buckets[hole].hash = 0
        count -= 1
    }

    private func bucketIndex(of id: OrderID, slot: Int) -> Int? {
        let hash = Self.stored(id.textHash)
        var index = Int(truncatingIfNeeded: hash) & mask
        while buckets[index].hash != 0 {
            if buckets[index].hash == hash && buckets[index].slot == Int32(slot) { return index }
            index = (index + 1) & mask
        }
        return nil
    }

    private mutating func place(_ bucket: Bucket) {
        var index = Int(truncatingIfNeeded: bucket.hash) & mask
        while buckets[index].hash != 0 { index = (index + 1) & mask }
        buckets[index] = bucket
    }

    private mutating func grow() {
        let old = buckets
        buckets = Array(repeating: Bucket(hash: 0, slot: 0), count: old.count * 2)
        mask = buckets.count - 1
        for bucket in old where bucket.hash != 0 { place(bucket) }
    }

    private static func stored(_ hash: UInt64) -> UInt64 { hash == 0 ? 1 : hash }
}
