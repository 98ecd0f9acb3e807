import LonglinkCore
import LonglinkLoop
import Synchronization

/// Fan-out on one loop: a commit batch's pushes (each encoded once for the whole process) reach this loop's
/// subscribers.
extension LoopGateway {
    /// A batch of stored records for this loop's subscribers, in commit order, each with its push frame. The same
    /// bytes go to every subscriber (one hub lookup per record, by `RouteKey`: no route text is built); the counters
    /// are added once per batch.
    func deliver(_ pushes: ArraySlice<EncodedPush>) {
        let counters = shared.counters
        let now = wallMillis
        var pushed = 0
        var pushedBytes = 0
        // Publish→deliver latencies, observed once per run of equal values: a commit batch is stored at one instant,
        // so its records share a timestamp, and the histogram's three shared atomics (every loop adds to them) are
        // updated once per batch instead of once per record.
        var latency: UInt64 = 0
        var latencyCount = 0
        // By index: an iterator hands out a copy of each push (two retains and two releases).
        for index in pushes.indices {
            let record = pushes[index].record
            let key = RouteKey(record)
            var push = PushBytes(frame: pushes[index].frame, failed: pushes[index].frame == nil)
            var count = 0
            var subscribers = 0
            // The hub's copy of the order's route, kept for line-wide subscribers only (see below).
            var orderRoute: Route?
            // The subscribers are walked here, not in a closure, with this gateway handed to each (no `unowned`
            // owner access per subscriber). The entry is a copy: a subscriber cut while it is walked leaves the hub.
            if let entry = hub.entry(of: key) {
                if hub.lineRouteCount > 0 { orderRoute = entry.route }
                switch entry.slot {
                case .one(let connection):
                    subscribers = 1
                    if connection.deliver(record, on: entry.route, push: &push, owner: self) { count = 1 }
                case .many(let list):
                    let connections = list.connections
                    subscribers = connections.count
                    for connection in connections where connection.deliver(record, on: entry.route, push: &push, owner: self) {
                        count += 1
                    }
                }
            }
            // Line-wide subscribers (`order://taxi/*`) get the same bytes: the push names the order's route.
            if hub.lineRouteCount > 0 {
                let lineKey = key.lineWide
                if hub.contains(lineKey) {
                    let route = orderRoute ?? record.route
                    subscribers += hub.forEachSubscriber(of: lineKey) { connection, line in
                        if connection.deliver(record, on: route, via: line, push: &push, owner: self) { count += 1 }
                    }
                }
            }
            guard subscribers > 0 else { continue }
            let stamp = record.timestampMillis
            let value = now > stamp ? (now - stamp) * 1_000_000 : 0
            if latencyCount > 0 && value != latency {
                counters.publishDeliverLatency.observe(latency, count: latencyCount)
                latencyCount = 0
            }
            latency = value
            latencyCount += 1
            if let bytes = push.frame {
                pushed += count
                pushedBytes += count * bytes.count
            }
        }
        counters.publishDeliverLatency.observe(latency, count: latencyCount)
        if pushed > 0 {
            counters.pushes.add(pushed, ordering: .relaxed)
            counters.pushedBytes.add(pushedBytes, ordering: .relaxed)
        }
    }

    /// A record's push frame, encoded once per process (or on first use) and shared by every subscriber; and the same
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
