public import LonglinkCore

/// Walking every order in (line, id) order, for `longlink migrate`.
extension RedisOrderStore {
    /// Reads the next members of every slot's `orders` set with `ZRANGEBYLEX` (one set on a server; 16,384 on a
    /// cluster, pipelined per node), merges them and reads the snapshots of the first `limit`.
    ///
    /// On a cluster a page after the first asks only the slots that still had members after the previous page
    /// (`OrderWalk`), so a whole walk costs one round over every slot plus a few commands per page. That shortcut
    /// holds while the store is quiescent, as migration requires; any write through this store ends it, and a
    /// cursor that does not continue the previous page starts over with every slot.
    public func orders(after cursor: OrderCursor?, limit: Int) throws(StoreError) -> [OrderSnapshot] {
        guard !closed else { throw .closed }
        guard limit > 0 else { return [] }
        var after: [UInt8]? = cursor.map { RedisKeys.member($0.line, $0.orderID) }
        var slots = (after != nil && walk?.after == after) ? walk!.slots : Array(0..<keys.slotCount)
        var snapshots: [OrderSnapshot] = []
        while snapshots.count < limit && !slots.isEmpty {
            let want = limit - snapshots.count
            let start = after.map { [UInt8(ascii: "(")] + $0 } ?? Array("-".utf8)
            let groups = slots.map { slot in
                RedisStoreLink.Group(
                    slot: slot,
                    commands: [[
                        Array("ZRANGEBYLEX".utf8), keys.orders(slot), start, Array("+".utf8), Array("LIMIT".utf8), Array("0".utf8),
                        Array(String(want).utf8),
                    ]],
                    replayable: true
                )
            }
            var found: [(member: [UInt8], slot: Int)] = []
            var full = Set<Int>()
            for (slot, result) in zip(slots, link.run(groups)) {
                let reply = try result.get()[0]
                if case .error(let message) = reply { throw .storage("\(link.name): \(message)", retryable: false) }
                let members = (reply.array ?? []).compactMap { reply -> [UInt8]? in
                    if case .bulk(let bytes) = reply { return bytes }
                    return nil
                }
                if members.count == want { full.insert(slot) }
                found += members.map { ($0, slot) }
            }
            found.sort { $0.member.lexicographicallyPrecedes($1.member) }
            let page = found.prefix(want)
            guard let last = page.last else {
                slots = []
                break
            }
            let orders = page.compactMap { RedisKeys.order(fromMember: $0.member) }.map { OrderKey(line: $0.0, id: $0.1) }
            let replies = try transactions(orders.map { ($0, [[Array("HGETALL".utf8), keys.order($0.line, $0.id)]]) })
            for (key, reply) in zip(orders, replies) {
                let stored = RedisRecordCodec.snapshot(RedisRecordCodec.pairs(reply[0]), line: key.line, order: key.id, epoch: epoch(for: key))
                if let stored { snapshots.append(stored.snapshot) }
            }
            // Slots that may hold members after `last`: those answering a full page, and those with members left over.
            let leftover = Set(found.dropFirst(want).map(\.slot))
            slots = slots.filter { full.contains($0) || leftover.contains($0) }
            after = last.member
        }
        walk = after.map { OrderWalk(after: $0, slots: slots) }
        return snapshots
    }
}

/// Where a walk over every order stands: the member it reached and the slots that may still hold members after it.
struct OrderWalk {
    var after: [UInt8]
    var slots: [Int]
}
