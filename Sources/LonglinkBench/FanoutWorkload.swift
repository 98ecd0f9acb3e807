/// The shape of a fan-out: S subscribers over T routes (subscriber i on route i mod T), M changes published at
/// R per second (0 = as fast as acknowledged, within `window` publishes in flight), payloads of P bytes. The same
/// workload runs against Longlink and against Redis pub/sub.
public struct FanoutWorkload: Sendable, Hashable, Codable {
    /// Subscribers (S).
    public var subscribers: Int
    /// Routes or channels (T).
    public var routes: Int
    /// Changes to publish (M).
    public var messages: Int
    /// Publishes per second (R); 0 = as fast as acknowledged.
    public var rate: Double
    /// Payload bytes (P), at least `BenchPayload.minimumSize`.
    public var payload: Int
    /// Publishes in flight at most.
    public var window: Int
    /// Deliveries in flight at most (published to subscribers but not yet received): keeps a closed-loop run from
    /// piling up queues in the server it measures.
    public var deliveryWindow: Int

    /// Creates a workload; sizes are clamped to sane minimums.
    public init(
        subscribers: Int,
        routes: Int,
        messages: Int,
        rate: Double,
        payload: Int,
        window: Int = 64,
        deliveryWindow: Int? = nil
    ) {
        self.subscribers = max(0, subscribers)
        self.routes = max(1, routes)
        self.messages = max(0, messages)
        self.rate = max(0, rate)
        self.payload = max(BenchPayload.minimumSize, payload)
        self.window = max(1, window)
        self.deliveryWindow = deliveryWindow ?? max(50_000, 2 * subscribers)
    }

    /// The route of subscriber `index`.
    public func route(ofSubscriber index: Int) -> Int { index % routes }

    /// How many subscribers listen on `route`.
    public func subscribers(onRoute route: Int) -> Int {
        subscribers / routes + (route < subscribers % routes ? 1 : 0)
    }
}

/// Route and channel names for one run: a random tag keeps runs against a long-lived server apart.
struct RouteNames: Sendable {
    let tag: String

    init() { tag = String(UInt32.random(in: 0...UInt32.max), radix: 36) }

    /// The order id of route `index` (`b<tag>-<index>`).
    func orderID(_ index: Int) -> String { "b\(tag)-\(index)" }
    /// The Longlink route URL of route `index`.
    func route(_ index: Int) -> String { "order://taxi/\(orderID(index))" }
    /// The Redis channel of route `index`.
    func channel(_ index: Int) -> String { "bench.\(tag).\(index)" }
}
