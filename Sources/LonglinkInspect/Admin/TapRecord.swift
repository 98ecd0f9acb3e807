import LonglinkJSON

/// One record from the gateway's `GET /admin/tap` event stream (absent fields are nil).
public struct TapRecord: Hashable, Sendable, Decodable {
    /// The route, `order://taxi/8812`.
    public var route: String
    /// Store epoch.
    public var epoch: UInt32
    /// Record offset.
    public var offset: UInt64
    /// Previous state; nil for an order's first record.
    public var from: String?
    /// New state.
    public var to: String
    /// Record time, ms since the Unix epoch.
    public var timeMillis: UInt64
    /// The driver, when the change set one.
    public var driverID: String?
    /// The ETA in seconds, when set.
    public var etaSeconds: UInt32?
    /// Latitude in micro-degrees, when set.
    public var latitudeE6: Int32?
    /// Longitude in micro-degrees, when set.
    public var longitudeE6: Int32?
    /// Why the order was cancelled, when set.
    public var cancellationReason: String?

    enum CodingKeys: String, CodingKey {
        case route, epoch, offset, from, to
        case timeMillis = "time_ms"
        case driverID = "driver_id"
        case etaSeconds = "eta_seconds"
        case latitudeE6 = "lat_e6"
        case longitudeE6 = "lon_e6"
        case cancellationReason = "cancellation_reason"
    }

    /// Parses one event's `data`.
    public init(json: String) throws(AdminError) {
        do {
            self = try JSONValue.decode(TapRecord.self, from: Array(json.utf8))
        } catch {
            throw AdminError("unreadable tap record \(json.prefix(200)): \(error)")
        }
    }

    /// One line: time, route, position, `from → to`, fields; with ANSI colours when `colour` is on.
    public func line(colour: Bool) -> String {
        func paint(_ text: String, _ code: String) -> String { colour ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text }
        let terminal = ["cancelled", "no_driver_timeout"].contains(to)
        var parts = [
            paint(JSONText.isoTime(millis: timeMillis), "2"),
            paint(route, "36"),
            paint("\(epoch):\(offset)", "2"),
            paint(from ?? "∅", "33") + " → " + paint(to, terminal ? "31;1" : "32;1"),
        ]
        if let driverID { parts.append("driver=\(FrameSummary.textValue(driverID))") }
        if let etaSeconds { parts.append("eta=\(etaSeconds)s") }
        if let latitudeE6, let longitudeE6 {
            parts.append("loc=\(Self.degrees(latitudeE6)),\(Self.degrees(longitudeE6))")
        }
        if let cancellationReason { parts.append("reason=\(FrameSummary.textValue(cancellationReason))") }
        return parts.joined(separator: " ")
    }

    static func degrees(_ value: Int32) -> String {
        let magnitude = value.magnitude
        let fraction = String(magnitude % 1_000_000)
        return (value < 0 ? "-" : "") + "\(magnitude / 1_000_000).\(String(repeating: "0", count: 6 - fraction.count))\(fraction)"
    }
}

/// Once-a-second rates for `inspect tap --stats`.
public struct TapStats: Sendable {
    private var windowStart: ContinuousClock.Instant
    private var windowCount = 0
    private var windowRoutes: Set<String> = []
    /// Records since the start.
    public private(set) var total = 0

    /// Starts counting now.
    public init(now: ContinuousClock.Instant = .now) { windowStart = now }

    /// Counts a record.
    public mutating func record(_ record: TapRecord) {
        total += 1
        windowCount += 1
        windowRoutes.insert(record.route)
    }

    /// The summary line when a second (or more) has passed since the last one, else nil.
    public mutating func tick(now: ContinuousClock.Instant = .now) -> String? {
        let elapsed = now - windowStart
        guard elapsed >= .seconds(1) else { return nil }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let rate = Double(windowCount) / seconds
        let line = "[stats] \(Self.oneDecimal(rate)) records/s over \(Self.oneDecimal(seconds))s, "
            + "\(windowRoutes.count) routes, \(total) total"
        windowStart = now
        windowCount = 0
        windowRoutes = []
        return line
    }

    static func oneDecimal(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }
}
