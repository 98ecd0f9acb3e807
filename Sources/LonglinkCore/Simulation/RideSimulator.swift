/// Realistic, seeded ride-hailing traffic: each order walks its business line's state machine from the initial
/// state to a terminal one, mostly along the happy path (the first allowed next state), sometimes cancelled, timed
/// out or reassigned, with the fields an app shows (driver, ETA counting down, a moving location, reasons).
///
/// Orders are interleaved: up to `concurrency` are in flight and each `next()` advances a random one, so the
/// stream looks like a city, not like one order after another. The same seed gives the same stream.
public struct RideSimulator: Sendable {
    /// One order on its way.
    struct Ride: Sendable {
        var id: OrderID
        var line: BusinessLine
        var state: OrderState?
        var driver: String?
        var eta: UInt32
        var location: GeoPoint
    }

    private let catalog: StateMachineCatalog
    private let lines: [BusinessLine]
    private let totalOrders: Int
    private let concurrency: Int
    private let happyPathProbability: Double
    private let idPrefix: String
    private var random: SeededGenerator
    private var started = 0
    private var active: [Ride] = []
    /// Changes produced so far.
    public private(set) var produced = 0
    /// Orders that reached a terminal state.
    public private(set) var finished = 0

    private static let reasons = ["rider_changed_plans", "driver_too_far", "wrong_pickup_point", "duplicate_order"]
    /// Around Shanghai's People's Square, in micro-degrees.
    private static let center = GeoPoint(latitudeE6: 31_230_416, longitudeE6: 121_473_701)

    /// A simulator of `orders` orders over `lines` (each must exist in `catalog`).
    public init(
        orders: Int,
        lines: [BusinessLine] = [.taxi, .express, .premium, .carpool],
        catalog: StateMachineCatalog = .builtIn,
        seed: UInt64 = 1,
        concurrency: Int = 64,
        happyPathProbability: Double = 0.85,
        idPrefix: String = "sim"
    ) {
        self.catalog = catalog
        self.lines = lines.filter { catalog.machine(for: $0) != nil }
        self.totalOrders = max(0, orders)
        self.concurrency = max(1, concurrency)
        self.happyPathProbability = happyPathProbability
        self.idPrefix = idPrefix
        self.random = SeededGenerator(seed: seed)
    }

    /// Whether every order reached a terminal state.
    public var isFinished: Bool { started == totalOrders && active.isEmpty }

    /// The next change, or nil when every order finished.
    public mutating func next() -> OrderChange? {
        while active.count < concurrency && started < totalOrders && !lines.isEmpty {
            let line = lines[Int(random.next() % UInt64(lines.count))]
            active.append(
                Ride(
                    id: OrderID("\(idPrefix)-\(started + 1)")!,
                    line: line,
                    state: nil,
                    driver: nil,
                    eta: UInt32(300 + random.next() % 900),
                    location: Self.jitter(Self.center, by: 20_000, &random)
                )
            )
            started += 1
        }
        guard !active.isEmpty else { return nil }
        let index = Int(random.next() % UInt64(active.count))
        var ride = active[index]
        let machine = catalog.machine(for: ride.line)!
        let target: OrderState
        if let state = ride.state {
            let allowed = machine.allowedNext(from: state)
            let roll = Double(random.next() % 10_000) / 10_000
            target = roll < happyPathProbability || allowed.count == 1
                ? allowed[0] : allowed[1 + Int(random.next() % UInt64(allowed.count - 1))]
        } else {
            target = machine.initialState
        }
        var fields = OrderFields()
        let required = machine.requiredFields(for: target)
        if required.contains(.driverID) || target == "driver_assigned" {
            ride.driver = "d-\(1000 + random.next() % 9000)"
            fields.driverID = ride.driver
        }
        if target == "dispatching" { ride.driver = nil }
        if ride.driver != nil {
            ride.eta = ride.eta > 60 ? ride.eta - UInt32(random.next() % 60) : ride.eta
            fields.etaSeconds = ride.eta
            ride.location = Self.jitter(ride.location, by: 800, &random)
            fields.location = ride.location
        }
        if required.contains(.cancellationReason) || target == "cancelled" {
            fields.cancellationReason = Self.reasons[Int(random.next() % UInt64(Self.reasons.count))]
        }
        if required.contains(.etaSeconds) { fields.etaSeconds = ride.eta }
        if required.contains(.location) { fields.location = ride.location }
        if required.contains(.payload) { fields.payload = [0x01] }
        ride.state = target
        produced += 1
        if machine.isTerminal(target) {
            active.remove(at: index)
            finished += 1
        } else {
            active[index] = ride
        }
        return OrderChange(orderID: ride.id, line: ride.line, targetState: target, fields: fields)
    }

    private static func jitter(_ point: GeoPoint, by range: Int32, _ random: inout SeededGenerator) -> GeoPoint {
        let dLat = Int32(truncatingIfNeeded: random.next() % UInt64(2 * range + 1)) - range
        let dLon = Int32(truncatingIfNeeded: random.next() % UInt64(2 * range + 1)) - range
        return GeoPoint(latitudeE6: point.latitudeE6 &+ dLat, longitudeE6: point.longitudeE6 &+ dLon)
    }
}
