/// A hash table of integers keyed by 64-bit digests that are already well mixed (`RouteKey.filterDigest`): open addressing
/// with linear probing, the slot picked by Fibonacci hashing of the digest itself. A `Dictionary<UInt64, Value>`
/// runs SipHash over the 8 bytes on every lookup (about 90 instructions, twice per published record: the broker
/// and the loops' masks); this takes a multiplication. Memory is a `Dictionary`'s: 8 bytes of key and the value
/// per slot, at most three quarters full.
///
/// Digest 0 marks an empty slot, so a key of 0 is stored as 1: the two share an entry, like any other pair of
/// digests that collide (the tables using this already accept a 64-bit collision).
public struct DigestMap<Value: FixedWidthInteger & Sendable>: Sendable {
    private var keys: [UInt64] = []
    /// Zero in empty slots.
    private var values: [Value] = []
    private var shift = 64
    /// Number of entries.
    public private(set) var count = 0

    /// An empty map (no storage until the first insertion).
    public init() {}

    /// Whether the map holds no entry.
    public var isEmpty: Bool { count == 0 }

    @inline(__always)
    private static func stored(_ digest: UInt64) -> UInt64 { digest == 0 ? 1 : digest }

    @inline(__always)
    private func home(_ key: UInt64) -> Int { Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> UInt64(shift)) }

    /// The slot holding `key`, or nil.
    @inline(__always)
    private func slot(of key: UInt64) -> Int? {
        guard !keys.isEmpty else { return nil }
        let mask = keys.count - 1
        return keys.withUnsafeBufferPointer { keys in
            var index = home(key)
            while true {
                let found = keys[index]
                if found == key { return index }
                if found == 0 { return nil }
                index = (index + 1) & mask
            }
        }
    }

    /// The value for `digest`; setting nil removes the entry.
    public subscript(digest: UInt64) -> Value? {
        get {
            guard let index = slot(of: Self.stored(digest)) else { return nil }
            return values[index]
        }
        set {
            let key = Self.stored(digest)
            if let index = slot(of: key) {
                if let newValue {
                    values[index] = newValue
                } else {
                    remove(at: index)
                }
                return
            }
            guard let newValue else { return }
            if (count + 1) * 4 > keys.count * 3 { grow() }
            insert(key, newValue)
            count += 1
        }
    }

    /// Removes every entry (and the storage).
    public mutating func removeAll() {
        keys = []
        values = []
        shift = 64
        count = 0
    }

    private mutating func insert(_ key: UInt64, _ value: Value) {
        let mask = keys.count - 1
        var index = home(key)
        while keys[index] != 0 { index = (index + 1) & mask }
        keys[index] = key
        values[index] = value
    }

    private mutating func grow() {
        let capacity = Swift.max(8, keys.count * 2)
        let oldKeys = keys
        let oldValues = values
        keys = [UInt64](repeating: 0, count: capacity)
        values = [Value](repeating: 0, count: capacity)
        shift = 64 - capacity.trailingZeroBitCount
        for index in oldKeys.indices where oldKeys[index] != 0 { insert(oldKeys[index], oldValues[index]) }
    }

    /// Empties `index` and moves back the entries of its probe run that would no longer be found (backward-shift
    /// deletion: no tombstones).
    private mutating func remove(at index: Int) {
        let mask = keys.count - 1
        var hole = index
        var next = (index + 1) & mask
        while keys[next] != 0 {
            let wanted = home(keys[next])
            // The entry at `next` may fill the hole when its home is not cyclically within (hole, next].
            let distanceToNext = (next - wanted) & mask
            let distanceToHole = (hole - wanted) & mask
            if distanceToHole < distanceToNext {
                keys[hole] = keys[next]
                values[hole] = values[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        keys[hole] = 0
        values[hole] = 0
        count -= 1
    }
}
