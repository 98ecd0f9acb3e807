import LonglinkCore
import LonglinkLoop
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
            if let bytes = push.frame {
                pushed += count
                pushedBytes += count * bytes.count
            }
        }
        if pushed > 0 {
            counters.pushes.add(pushed, ordering: .relaxed)
            counters.pushedBytes.add(pushedBytes, ordering: .relaxed)
        }
    }

    /// A record's push frame, encoded on first use and shared by every subscriber on this loop; and the same
    /// frame wrapped in a message of a message transport (WebSocket), made once for all subscribers on such
    /// transports (a server message's header depends only on its length).
    struct PushBytes {
        /// Not encoded yet.
        static var notEncoded: PushBytes { PushBytes() }
        /// The encoded push frame, once made.
        var frame: [UInt8]?
        /// The frame could not be encoded (logged once).
        var failed = false
        /// `frame` wrapped by `messageFramerType`'s framer.
        var message: [UInt8]?
        var messageFramerType: ObjectIdentifier?
    }

    /// The push bytes of `record` for a connection whose transport has `framer` (nil: a byte stream), encoding
    /// and framing them the first time (nil when the record cannot be encoded; logged once).
    func pushBytes(_ record: OrderChangeRecord, on route: Route, _ push: inout PushBytes, framer: (any MessageFramer.Type)? = nil) -> [UInt8]? {
        guard !push.failed else { return nil }
        let frame: [UInt8]
        if let encoded = push.frame {
            frame = encoded
        } else {
            do {
                frame = try shared.codec.encodedFrame(.push(Push(route: route, record: record)))
            } catch {
                shared.logger.error("could not encode a push: \(error)", [("route", route.text)])
                push.failed = true
                return nil
            }
            push.frame = frame
        }
        guard let framer else { return frame }
        let type = ObjectIdentifier(framer)
        if let message = push.message, push.messageFramerType == type { return message }
        let message = framer.message(carrying: frame)
        if push.message == nil {
            push.message = message
            push.messageFramerType = type
        }
        return message
    }
}
