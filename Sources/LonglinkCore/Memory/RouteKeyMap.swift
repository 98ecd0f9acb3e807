/// A map from `RouteKey` to a value over the order id's precomputed hash (`OrderSlotIndex`): a lookup per record
/// costs a probe and one key compare, no `Hasher` rounds (a `Dictionary` keyed by `RouteKey` runs SipHash on every
/// lookup). Keys and values are stored densely; removal moves the last entry into the hole.
public struct RouteKeyMap<Value> {
    private var index = OrderSlotIndex()
    private var keys: [RouteKey] = []
    private var values: [Value] = []

    public init() {}

    /// How many keys the map holds.
    public var count: Int { keys.count }
    /// Whether the map holds no key.
    public var isEmpty: Bool { keys.isEmpty }

    /// The value of `key`, nil when absent; setting nil removes the key.
    public subscript(key: RouteKey) -> Value? {
        get {
            guard let slot = slot(of: key) else { return nil }
            return values[slot]
        }
        set {
            if let slot = slot(of: key) {
                if let newValue {
                    values[slot] = newValue
                } else {
                    remove(at: slot)
                }
            } else if let newValue {
                index.insert(key.id, at: keys.count)
                keys.append(key)
                values.append(newValue)
            }
        }
    }

    /// Whether `key` is in the map.
    public func contains(_ key: RouteKey) -> Bool { slot(of: key) != nil }

    /// Removes every key.
    public mutating func removeAll() {
        index = OrderSlotIndex()
        keys.removeAll()
        values.removeAll()
    }

    private func slot(of key: RouteKey) -> Int? {
        keys.withUnsafeBufferPointer { keys in index.slot(of: key.id) { keys[$0] == key } }
    }

    private mutating func remove(at slot: Int) {
        let last = keys.count - 1
        index.remove(keys[slot].id, at: slot)
        if slot != last {
            index.move(keys[last].id, from: last, to: slot)
            keys.swapAt(slot, last)
            values.swapAt(slot, last)
        }
        keys.removeLast()
        values.removeLast()
    }
}

extension RouteKeyMap: Sendable where Value: Sendable {}
