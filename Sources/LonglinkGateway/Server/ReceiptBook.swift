import LonglinkCore
import LonglinkLoop
import Synchronization

/// Delivery receipts: a publisher that asked for them is told, per subscriber, when a subscriber acked the
/// record. Simple but real: watches live for `ttlMillis` and at most `capacity` are kept (oldest dropped).
final class ReceiptBook: Sendable {
    struct Watch {
        var position: StreamPosition
        /// The publisher's loop gateway, reached by a job on its loop.
        var publisher: LoopBound<LoopGateway>
        var publisherConnection: UInt64
        var acked: Set<String>
        var createdAtMillis: UInt64
    }

    private let watches = Mutex<[Route: [Watch]]>([:])
    private let count = Atomic<Int>(0)
    let ttlMillis: UInt64
    let capacity: Int

    init(ttlMillis: UInt64 = 60_000, capacity: Int = 10_000) {
        self.ttlMillis = ttlMillis
        self.capacity = capacity
    }

    /// Starts watching acks of `position` on `route` for a publisher.
    func watch(
        _ route: Route,
        _ position: StreamPosition,
        publisher: LoopBound<LoopGateway>,
        connection: UInt64,
        nowMillis: UInt64
    ) {
        watches.withLock { table in
            if count.load(ordering: .relaxed) >= capacity { prune(&table, nowMillis: nowMillis, force: true) }
            table[route, default: []].append(
                Watch(position: position, publisher: publisher, publisherConnection: connection, acked: [], createdAtMillis: nowMillis)
            )
            count.add(1, ordering: .relaxed)
        }
    }

    /// A subscriber acked `route` up to `offset`; returns the receipts to send (publisher's loop gateway,
    /// connection, frame).
    func acknowledged(_ route: Route, offset: UInt64, subscriberID: String, nowMillis: UInt64)
        -> [(LoopBound<LoopGateway>, UInt64, DeliveryReceipt)]
    {
        guard count.load(ordering: .relaxed) > 0 else { return [] }
        return watches.withLock { table in
            guard var list = table[route] else { return [] }
            var receipts: [(LoopBound<LoopGateway>, UInt64, DeliveryReceipt)] = []
            for index in list.indices where list[index].position.offset <= offset {
                guard list[index].acked.insert(subscriberID).inserted else { continue }
                receipts.append(
                    (
                        list[index].publisher,
                        list[index].publisherConnection,
                        DeliveryReceipt(
                            route: route,
                            position: list[index].position,
                            subscriberID: subscriberID,
                            ackedCount: UInt32(list[index].acked.count)
                        )
                    )
                )
            }
            let before = list.count
            list.removeAll { nowMillis &- $0.createdAtMillis > ttlMillis }
            count.subtract(before - list.count, ordering: .relaxed)
            table[route] = list.isEmpty ? nil : list
            return receipts
        }
    }

    private func prune(_ table: inout [Route: [Watch]], nowMillis: UInt64, force: Bool) {
        var removed = 0
        for route in Array(table.keys) {
            let before = table[route]!.count
            table[route]!.removeAll { force || nowMillis &- $0.createdAtMillis > ttlMillis }
            removed += before - table[route]!.count
            if table[route]!.isEmpty { table[route] = nil }
        }
        count.subtract(removed, ordering: .relaxed)
    }
}
