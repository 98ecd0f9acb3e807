/// A hash table of integers keyed by 64-bit digests that are already well mixed (`RouteKey.filterDigest`): open addressing
/// with linear probing, the slot picked by Fibonacci hashing of the digest itself. A `Dictionary<UInt64, Value>`
/// runs SipHash over the 8 bytes on every lookup (about 90 instructions, twice per published record: the broker
/// and the loops' masks); this takes a multiplication. Memory is a `Dictionary`'s: 8 bytes of key and the value
/// per slot (side by side), at most three quarters full.
///
/// Digest 0 marks an empty slot, so a key of 0 is stored as 1: the two share an entry, like any other pair of
/// digests that collide (the tables using this already accept a 64-bit collision).
public struct DigestMap<Value: FixedWidthInteger & Sendable>: Sendable {
    /// One slot: the digest (0 when empty) beside its value, so a lookup that finds its key at home reads one cache
    /// line (the tables are looked up once per published record, cold: with keys and values in two arrays, that was
    /// two lines).
    @usableFromInline
    struct Entry: Sendable {
        @usableFromInline var key: UInt64
        /// Zero in empty slots.
        @usableFromInline var value: Value

        @usableFromInline init(key: UInt64, value: Value) {
            self.key = key
            self.value = value
        }
    }

    @usableFromInline var entries: [Entry] = []
    @usableFromInline var shift = 64
    /// Number of entries.
    public private(set) var count = 0

    /// An empty map (no storage until the first insertion).
    public init() {}

    /// Whether the map holds no entry.
    public var isEmpty: Bool { count == 0 }

    @inlinable @inline(__always)
    static func stored(_ digest: UInt64) -> UInt64 { digest == 0 ? 1 : digest }

    @inlinable @inline(__always)
    func home(_ key: UInt64) -> Int { Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> UInt64(shift)) }

    /// The slot holding `key`, or nil.
    @inlinable @inline(__always)
    func slot(of key: UInt64) -> Int? {
        guard !entries.isEmpty else { return nil }
        let mask = entries.count - 1
        return entries.withUnsafeBufferPointer { entries in
            var index = home(key)
            while true {
                let found = entries[index].key
                if found == key { return index }
                if found == 0 { return nil }
                index = (index + 1) & mask
            }
        }
    }

    /// The value for `digest`; setting nil removes the entry. (The getter is inlinable: it runs per published
    /// record in other modules, where a generic call would run unspecialised.)
    public subscript(digest: UInt64) -> Value? {
        @inlinable get {
            guard let index = slot(of: Self.stored(digest)) else { return nil }
            return entries.withUnsafeBufferPointer { $0[index].value }
        }
        set {
            let key = Self.stored(digest)
            if let index = slot(of: key) {
                if let newValue {
                    entries[index].value = newValue
                } else {
                    remove(at: index)
                }
                return
            }
            guard let newValue else { return }
            if (count + 1) * 4 > entries.count * 3 { grow() }
            insert(key, newValue)
            count += 1
        }
    }

    /// Removes every entry (and the storage).
    public mutating func removeAll() {
        entries = []
        shift = 64
        count = 0
    }

    private mutating func insert(_ key: UInt64, _ value: Value) {
        let mask = entries.count - 1
        var index = home(key)
        while entries[index].key != 0 { index = (index + 1) & mask }
        entries[index] = Entry(key: key, value: value)
    }

    private mutating func grow() {
        let capacity = Swift.max(8, entries.count * 2)
        let old = entries
        entries = [Entry](repeating: Entry(key: 0, value: 0), count: capacity)
        shift = 64 - capacity.trailingZeroBitCount
        for entry in old where entry.key != 0 { insert(entry.key, entry.value) }
    }

    /// Empties `index` and moves back the entries of its probe run that would no longer be found (backward-shift
    /// deletion: no tombstones).
    private mutating func remove(at index: Int) {
        let mask = entries.count - 1
        var hole = index
        var next = (index + 1) & mask
        while entries[next].key != 0 {
            let wanted = home(entries[next].key)
            // The entry at `next` may fill the hole when its home is not cyclically within (hole, next].
            let distanceToNext = (next - wanted) & mask
            let distanceToHole = (hole - wanted) & mask
            if distanceToHole < distanceToNext {
                entries[hole] = entries[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        entries[hole] = Entry(key: 0, value: 0)
        count -= 1
    }
}
