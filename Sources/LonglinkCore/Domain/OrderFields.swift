/// A point on Earth as fixed-point integers: degrees × 1,000,000 (about 11 cm of precision), compact on the wire.
public struct GeoPoint: Hashable, Sendable, CustomStringConvertible {
    /// Latitude in micro-degrees (−90,000,000 … 90,000,000).
    public var latitudeE6: Int32
    /// Longitude in micro-degrees (−180,000,000 … 180,000,000).
    public var longitudeE6: Int32

    public init(latitudeE6: Int32, longitudeE6: Int32) {
        self.latitudeE6 = latitudeE6
        self.longitudeE6 = longitudeE6
    }

    /// Whether both coordinates are within their ranges.
    public var isValid: Bool {
        (-90_000_000...90_000_000).contains(latitudeE6) && (-180_000_000...180_000_000).contains(longitudeE6)
    }

    public var description: String {
        "\(Self.format(latitudeE6)),\(Self.format(longitudeE6))"
    }

    private static func format(_ value: Int32) -> String {
        let sign = value < 0 ? "-" : ""
        let magnitude = value.magnitude
        let fraction = String(magnitude % 1_000_000)
        return "\(sign)\(magnitude / 1_000_000).\(String(repeating: "0", count: 6 - fraction.count))\(fraction)"
    }
}

/// The fields of an order a rider or driver app shows, carried by a change and merged into the snapshot.
///
/// In a change, `nil` means "unchanged". Merging (`merging(_:)`) overwrites only the fields a change sets.
public struct OrderFields: Hashable, Sendable {
    /// The assigned driver, once there is one.
    public var driverID: String?
    /// Estimated seconds until the next milestone (pick-up or arrival).
    public var etaSeconds: UInt32?
    /// The driver's (or the order's) current location.
    public var location: GeoPoint?
    /// Why the order was cancelled or timed out.
    public var cancellationReason: String?
    /// Opaque application bytes (at most `maxPayloadBytes`), pushed unchanged; empty when unused.
    public var payload: [UInt8]
    /// A feature toggle's value (records on `config://` routes only).
    public var toggle: ToggleValue?

    /// The largest payload a change may carry.
    public static let maxPayloadBytes = 16 * 1024

    public init(
        driverID: String? = nil,
        etaSeconds: UInt32? = nil,
        location: GeoPoint? = nil,
        cancellationReason: String? = nil,
        payload: [UInt8] = [],
        toggle: ToggleValue? = nil
    ) {
        self.toggle = toggle
        self.driverID = driverID
        self.etaSeconds = etaSeconds
        self.location = location
        self.cancellationReason = cancellationReason
        self.payload = payload
    }

    /// No field set.
    public static let none = OrderFields()

    /// These fields with every field `change` sets written over them.
    public func merging(_ change: OrderFields) -> OrderFields {
        OrderFields(
            driverID: change.driverID ?? driverID,
            etaSeconds: change.etaSeconds ?? etaSeconds,
            location: change.location ?? location,
            cancellationReason: change.cancellationReason ?? cancellationReason,
            payload: change.payload.isEmpty ? payload : change.payload,
            toggle: change.toggle ?? toggle
        )
    }
}
