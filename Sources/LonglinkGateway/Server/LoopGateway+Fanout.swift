import LonglinkCore
import Synchronization

/// Fan-out on one loop: a commit batch's records reach this loop's subscribers, each push encoded once per loop.
extension LoopGateway {
    /// A batch of stored records for this loop's subscribers, in commit order, with their routes (`routes[i]` is
    /// `records[i].route`, built once for all loops). A record's push is encoded once, when its first subscriber
    /// here takes it, and the same bytes go to every one of them (one hub lookup per record); the counters are
    /// added once per batch.
    func deliver(_ records: [OrderChangeRecord], on routes: [Route]) {
        let counters = shared.counters
        let now = wallMillis
        var pushed = 0
        var pushedBytes = 0
        for (record, route) in zip(records, routes) {
            var push = PushBytes.notEncoded
            var count = 0
            var subscribers = hub.forEachSubscriber(of: route) { connection in
                if connection.deliver(record, on: route, push: &push) { count += 1 }
            }
            // Line-wide subscribers (`order://taxi/*`) get the same bytes: the push names the order's route.
            for line in hub.lineRoutes where line.lineCovers(route) {
                subscribers += hub.forEachSubscriber(of: line) { connection in
                    if connection.deliver(record, on: route, via: line, push: &push) { count += 1 }
                }
            }
            guard subscribers > 0 else { continue }
            let stamp = record.timestampMillis
            counters.publishDeliverLatency.observe(now > stamp ? (now - stamp) * 1_000_000 : 0)
            if case .encoded(let bytes) = push {
                pushed += count
                pushedBytes += count * bytes.count
            }
        }
        if pushed > 0 {
            counters.pushes.add(pushed, ordering: .relaxed)
            counters.pushedBytes.add(pushedBytes, ordering: .relaxed)
        }
    }

    /// A record's push frame, encoded on first use and shared by every subscriber on this loop.
    enum PushBytes {
        case notEncoded
        case encoded([UInt8])
        case failed
    }

    /// The push bytes of `record`, encoding them the first time (nil when the record cannot be encoded; logged once).
    func pushBytes(_ record: OrderChangeRecord, on route: Route, _ push: inout PushBytes) -> [UInt8]? {
        switch push {
        case .encoded(let bytes):
            return bytes
        case .failed:
            return nil
        case .notEncoded:
            let bytes: [UInt8]
            do {
                bytes = try shared.codec.encodedFrame(.push(Push(route: route, record: record)))
            } catch {
                shared.logger.error("could not encode a push: \(error)", [("route", route.text)])
                push = .failed
                return nil
            }
            push = .encoded(bytes)
            return bytes
        }
    }
}
