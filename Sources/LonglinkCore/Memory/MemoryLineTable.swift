/// The orders of one business line in a `MemoryOrderStore`: a value the store mutates in place, so a change costs
/// one dictionary lookup (the id's precomputed hash) and no reference counting of per-order objects.
///
/// Orders live in a contiguous array; `slots` (an `OrderSlotIndex`) maps an id to its position. Removing an order moves the last one
/// into its place.
struct MemoryLineTable {
    /// The line.
    let line: BusinessLine
    /// The line's state machine, resolved once.
    let machine: StateMachine
    private var slots = OrderSlotIndex()
    private var orders: ContiguousArray<MemoryOrder> = []
    /// Ids in order for `snapshots(after:limit:into:)`; nil after an order was added or removed.
    private var sortedIDs: [OrderID]?

    init(machine: StateMachine) {
        self.line = machine.line
        self.machine = machine
    }
    /// How many orders the table holds.
    var count: Int { orders.count }

    /// The order `id`, if present.
    func order(_ id: OrderID) -> MemoryOrder? {
        guard let slot = slot(of: id) else { return nil }
        return orders[slot]
    }

    private func slot(of id: OrderID) -> Int? {
        slots.slot(of: id) { orders[$0].orderID == id }
    }

    /// Validates and records `change` (see `OrderStore.apply`): a replayed idempotency key returns the first
    /// record (or `idempotencyConflict` for a different change); otherwise the change is prepared by `ChangeValidation` and appended.
    mutating func apply(_ change: OrderChange, epoch: UInt32, nowMillis: UInt64, keeping: Int)
        throws(StoreError) -> AppliedChange
    {
        if let slot = slot(of: change.orderID) {
            let key = change.idempotencyKey
            if !key.isEmpty, let offset = orders[slot].keys[key], let first = orders[slot].record(at: offset) {
                try ChangeValidation.checkReplay(change, of: first)
                return AppliedChange(record: first, snapshot: orders[slot].snapshot, deduplicated: true)
            }
            let (prepared, stateIndex) = try ChangeValidation.prepare(
                change,
                current: orders[slot].snapshot,
                currentStateIndex: orders[slot].stateIndex,
                machine: machine,
                epoch: epoch,
                nowMillis: nowMillis
            )
            orders[slot].append(prepared.record, snapshot: prepared.snapshot, stateIndex: stateIndex, keeping: keeping)
            return AppliedChange(record: prepared.record, snapshot: prepared.snapshot, deduplicated: false)
        }
        let (prepared, stateIndex) = try ChangeValidation.prepare(
            change,
            current: nil,
            currentStateIndex: nil,
            machine: machine,
            epoch: epoch,
            nowMillis: nowMillis
        )
        slots.insert(change.orderID, at: orders.count)
        orders.append(MemoryOrder(first: prepared.record, snapshot: prepared.snapshot, stateIndex: stateIndex))
        sortedIDs = nil
        return AppliedChange(record: prepared.record, snapshot: prepared.snapshot, deduplicated: false)
    }

    /// Stores a record another store committed (see `OrderStore.applyCommittedBatch`).
    mutating func applyCommitted(_ record: OrderChangeRecord, epoch: UInt32, keeping: Int)
        throws(StoreError) -> AppliedChange
    {
        let slot = slot(of: record.orderID)
        let current = slot.map { orders[$0].snapshot }
        switch try ChangeValidation.prepareCommitted(record, current: current, machine: machine, epoch: epoch) {
        case .compare(let offset):
            guard let slot, let current else { preconditionFailure("compared with an order that does not exist") }
            return try ChangeValidation.heldRecord(record, stored: orders[slot].record(at: offset), current: current)
        case .append(let prepared):
            let stateIndex = machine.index(of: prepared.snapshot.state) ?? 0
            if let slot {
                orders[slot].append(prepared.record, snapshot: prepared.snapshot, stateIndex: stateIndex, keeping: keeping)
            } else {
                slots.insert(record.orderID, at: orders.count)
                orders.append(MemoryOrder(first: prepared.record, snapshot: prepared.snapshot, stateIndex: stateIndex))
                sortedIDs = nil
            }
            return AppliedChange(record: prepared.record, snapshot: prepared.snapshot, deduplicated: false)
        }
    }

    /// Adds or replaces an order with an imported snapshot and history.
    mutating func put(_ snapshot: OrderSnapshot, history: [OrderChangeRecord]) {
        let order = MemoryOrder(
            snapshot: snapshot,
            stateIndex: machine.index(of: snapshot.state) ?? 0,
            history: history
        )
        if let slot = slot(of: snapshot.orderID) {
            orders[slot] = order
        } else {
            slots.insert(snapshot.orderID, at: orders.count)
            orders.append(order)
            sortedIDs = nil
        }
    }

    /// Appends the snapshots of orders with ids after `after` (all when nil), in id order, until `result` holds
    /// `limit`.
    mutating func snapshots(after: OrderID?, limit: Int, into result: inout [OrderSnapshot]) {
        let ids = sortedIDs ?? orders.map(\.orderID).sorted()
        sortedIDs = ids
        var low = 0
        if let after {
            var high = ids.count
            while low < high {
                let mid = (low + high) / 2
                if ids[mid] <= after { low = mid + 1 } else { high = mid }
            }
        }
        for id in ids[low...] {
            guard result.count < limit else { return }
            if let slot = slot(of: id) { result.append(orders[slot].snapshot) }
        }
    }

    /// Removes terminal orders idle for the retention's TTL and trims old records of the others; returns how
    /// many orders were removed.
    mutating func expire(nowMillis: UInt64, retention: StoreRetention) -> Int {
        var removed = 0
        var slot = 0
        while slot < orders.count {
            let updated = orders[slot].snapshot.updatedAtMillis
            let idle = nowMillis >= updated ? nowMillis - updated : 0
            if idle >= retention.terminalOrderTTLMillis && machine.isTerminal(atIndex: orders[slot].stateIndex) {
                remove(at: slot)
                removed += 1
            } else {
                orders[slot].trim(olderThan: nowMillis, maxAgeMillis: retention.maxHistoryAgeMillis)
                slot += 1
            }
        }
        if removed > 0 { sortedIDs = nil }
        return removed
    }

    /// Removes the order at `slot`, moving the last order into its place.
    private mutating func remove(at slot: Int) {
        slots.remove(orders[slot].orderID, at: slot)
        let last = orders.count - 1
        if slot != last {
            slots.move(orders[last].orderID, from: last, to: slot)
            orders.swapAt(slot, last)
        }
        orders.removeLast()
    }
}

/// One order in a `MemoryLineTable`: snapshot, the index of its state in the line's machine, retained records
/// (`storage[head...]`) and the idempotency keys of retained records.
struct MemoryOrder {
    private(set) var snapshot: OrderSnapshot
    /// The index of `snapshot.state` in the line's machine (saves a name lookup per change).
    private(set) var stateIndex: Int
    private var storage: ContiguousArray<OrderChangeRecord>
    private var head = 0
    /// Idempotency key → offset of its record, for retained records.
    private(set) var keys: [String: UInt64] = [:]

    /// A new order: room for its first few records without regrowing.
    init(first record: OrderChangeRecord, snapshot: OrderSnapshot, stateIndex: Int) {
        self.snapshot = snapshot
        self.stateIndex = stateIndex
        self.storage = []
        storage.reserveCapacity(8)
        storage.append(record)
        let key = record.idempotencyKey
        if !key.isEmpty { keys[key] = record.position.offset }
    }

    init(snapshot: OrderSnapshot, stateIndex: Int, history: [OrderChangeRecord]) {
        self.snapshot = snapshot
        self.stateIndex = stateIndex
        self.storage = ContiguousArray(history)
        for record in history where !record.idempotencyKey.isEmpty {
            keys[record.idempotencyKey] = record.position.offset
        }
    }

    /// The order's id.
    var orderID: OrderID { snapshot.cell.value.orderID }
    var history: [OrderChangeRecord] { Array(storage[head...]) }
    var firstOffset: UInt64? { head < storage.count ? storage[head].position.offset : nil }

    func record(at offset: UInt64) -> OrderChangeRecord? {
        guard let first = firstOffset, offset >= first else { return nil }
        let index = head + Int(offset - first)
        return index < storage.count ? storage[index] : nil
    }

    func records(from offset: UInt64, limit: Int) -> [OrderChangeRecord] {
        guard let first = firstOffset, offset >= first else { return [] }
        let start = head + Int(offset - first)
        guard start < storage.count else { return [] }
        return Array(storage[start..<min(storage.count, start + limit)])
    }

    /// Appends a record, then keeps the newest `count` records (at least one).
    mutating func append(_ record: OrderChangeRecord, snapshot: OrderSnapshot, stateIndex: Int, keeping count: Int) {
        storage.append(record)
        self.snapshot = snapshot
        self.stateIndex = stateIndex
        let key = record.idempotencyKey
        if !key.isEmpty { keys[key] = record.position.offset }
        let keep = max(1, count)
        if storage.count - head > keep {
            while storage.count - head > keep { dropFirst() }
            compact()
        }
    }

    /// Drops records older than `maxAgeMillis`, keeping the latest record.
    mutating func trim(olderThan nowMillis: UInt64, maxAgeMillis: UInt64) {
        while storage.count - head > 1 {
            let stamp = storage[head].timestampMillis
            guard nowMillis > stamp, nowMillis - stamp > maxAgeMillis else { break }
            dropFirst()
        }
        compact()
    }

    private mutating func dropFirst() {
        let key = storage[head].idempotencyKey
        if !key.isEmpty { keys[key] = nil }
        head += 1
    }

    /// Moves the retained window to the array's front once more than half of it is dropped records.
    private mutating func compact() {
        if head > 16 && head * 2 > storage.count {
            storage.removeFirst(head)
            head = 0
        }
    }
}
