/// One of the two workloads `bench profile` measures (issue 19): the same S subscribers, the route layout, the
/// steady publish rate and the payload size, for the gateway and for Redis pub/sub alike.
public struct ProfileWorkload: Sendable, Hashable {
    /// Which workload.
    public enum Kind: String, Sendable, Hashable, CaseIterable, Codable {
        /// Every subscriber on its own route, 500 publishes/s, 128-byte payloads: the per-record path.
        case manyRoutes = "many-routes"
        /// Every subscriber on one route, 50 publishes/s, 64-byte payloads: the per-subscriber fan-out.
        case broadcast
    }

    /// Which workload.
    public var kind: Kind
    /// Publishes per second (steady, paced).
    public var rate: Double
    /// Payload bytes per publish.
    public var payload: Int

    /// The workload of `kind` as issue 19 defines it.
    public init(_ kind: Kind) {
        self.kind = kind
        switch kind {
        case .manyRoutes:
            rate = 500
            payload = 128
        case .broadcast:
            rate = 50
            payload = 64
        }
    }

    /// The two publish counts measured when none are given: 4 and 14 seconds at the workload's rate (2,000 and
    /// 7,000 on many routes). Broadcast delivers a thousand times more per publish; longer runs there make the
    /// server under callgrind fall behind the rate on a shared machine, which batches and changes the figure.
    public var defaultCounts: [Int] {
        [Int(4 * rate), Int(14 * rate)]
    }

    /// The routes for `subscribers` subscribers: one each, or one for all.
    public func routes(subscribers: Int) -> Int {
        kind == .manyRoutes ? max(1, subscribers) : 1
    }

    /// The fan-out that runs it: `messages` publishes at the workload's rate.
    func fanout(subscribers: Int, messages: Int) -> FanoutWorkload {
        FanoutWorkload(subscribers: subscribers, routes: routes(subscribers: subscribers), messages: messages, rate: rate, payload: payload)
    }

    /// A line for tables and notes, e.g. `many routes: 1,000 subscribers each on its own route, 500 publishes/s, 128 B`.
    public func title(subscribers: Int) -> String {
        let layout = kind == .manyRoutes ? "each on its own route" : "on one route"
        return "\(kind == .manyRoutes ? "many routes" : "broadcast"): \(BenchRendering.grouped(Double(subscribers))) subscribers "
            + "\(layout), \(format(rate)) publishes/s, \(payload) B"
    }
}
