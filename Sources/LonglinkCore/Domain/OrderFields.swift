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
/// The fields a ride's changes carry (driver, ETA, location) are held inline, the payload by itself (its array is
/// its only allocation), and the rare ones (cancellation reason, toggle value) in one immutable box, made only
/// when one of them is set. So the usual change (a driver assigned, a location and ETA update, a payload)
/// allocates nothing of its own, and a merge copies its fields with two retains at most.
public struct OrderFields: Hashable, Sendable {
    /// The fields rarely set, shared by every copy; nil when neither is set.
    /// (`@usableFromInline`: the getters below are inlined into the encoders of other modules, which read every
    /// field of every pushed record.)
    @usableFromInline
    struct Rare: Hashable, Sendable {
        @usableFromInline var cancellationReason: String? = nil
        @usableFromInline var toggle: ToggleValue? = nil

        /// No field set.
        var isEmpty: Bool { cancellationReason == nil && toggle == nil }
    }

    /// Which of the inline number fields are set (bits of `present`).
    @usableFromInline static var etaBit: UInt8 { 1 }
    @usableFromInline static var locationBit: UInt8 { 2 }

    /// The assigned driver (inline: a short identifier needs no allocation).
    @usableFromInline var storedDriverID: String?
    @usableFromInline var storedETA: UInt32
    @usableFromInline var storedLatitudeE6: Int32
    @usableFromInline var storedLongitudeE6: Int32
    /// `etaBit` and `locationBit`: whether `storedETA` and the location are set.
    @usableFromInline var present: UInt8
    /// The cancellation reason and the toggle value; nil when neither is set.
    @usableFromInline var box: ValueBox<Rare>?
    /// The payload (empty when unused).
    @usableFromInline var storedPayload: [UInt8]

    /// The assigned driver, once there is one.
    public var driverID: String? {
        @inlinable get { storedDriverID }
        set { storedDriverID = newValue }
    }
    /// Estimated seconds until the next milestone (pick-up or arrival).
    public var etaSeconds: UInt32? {
        @inlinable get { present & Self.etaBit != 0 ? storedETA : nil }
        set {
            storedETA = newValue ?? 0
            present = newValue == nil ? present & ~Self.etaBit : present | Self.etaBit
        }
    }
    /// The driver's (or the order's) current location.
    public var location: GeoPoint? {
        @inlinable get {
            present & Self.locationBit != 0 ? GeoPoint(latitudeE6: storedLatitudeE6, longitudeE6: storedLongitudeE6) : nil
        }
        set {
            storedLatitudeE6 = newValue?.latitudeE6 ?? 0
            storedLongitudeE6 = newValue?.longitudeE6 ?? 0
            present = newValue == nil ? present & ~Self.locationBit : present | Self.locationBit
        }
    }
    /// Why the order was cancelled or timed out.
    public var cancellationReason: String? {
        @inlinable get { box?.value.cancellationReason ?? nil }
        set { updateRare { $0.cancellationReason = newValue } }
    }
    /// Opaque application bytes (at most `maxPayloadBytes`), pushed unchanged; empty when unused.
    public var payload: [UInt8] {
        @inlinable get { storedPayload }
        set { storedPayload = newValue }
    }
    /// A feature toggle's value (records on `config://` routes only).
    public var toggle: ToggleValue? {
        @inlinable get { box?.value.toggle ?? nil }
        set { updateRare { $0.toggle = newValue } }
    }

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
        storedDriverID = driverID
        storedETA = etaSeconds ?? 0
        storedLatitudeE6 = location?.latitudeE6 ?? 0
        storedLongitudeE6 = location?.longitudeE6 ?? 0
        present = (etaSeconds == nil ? 0 : Self.etaBit) | (location == nil ? 0 : Self.locationBit)
        let rare = Rare(cancellationReason: cancellationReason, toggle: toggle)
        box = rare.isEmpty ? nil : ValueBox(rare)
        storedPayload = payload
    }

    /// No field set.
    public static let none = OrderFields()

    /// Whether no field is set.
    @inlinable public var isEmpty: Bool { present == 0 && storedDriverID == nil && box == nil && storedPayload.isEmpty }

    private mutating func updateRare(_ change: (inout Rare) -> Void) {
        var value = box?.value ?? Rare()
        change(&value)
        box = value.isEmpty ? nil : ValueBox(value)
    }

    public static func == (lhs: OrderFields, rhs: OrderFields) -> Bool {
        guard lhs.present == rhs.present, lhs.storedDriverID == rhs.storedDriverID, lhs.etaSeconds == rhs.etaSeconds,
            lhs.location == rhs.location, lhs.storedPayload == rhs.storedPayload
        else { return false }
        if lhs.box === rhs.box { return true }
        guard let left = lhs.box, let right = rhs.box else { return false }
        return left.value == right.value
    }
    public func hash(into hasher: inout Hasher) {
        hasher.combine(storedDriverID)
        hasher.combine(etaSeconds)
        hasher.combine(location)
        hasher.combine(box?.value ?? Rare())
        hasher.combine(storedPayload)
    }

    /// These fields with every field `change` sets written over them.
    public func merging(_ change: OrderFields) -> OrderFields {
        var result = self
        if !change.storedPayload.isEmpty { result.storedPayload = change.storedPayload }
        if let driverID = change.storedDriverID { result.storedDriverID = driverID }
        if change.present & Self.etaBit != 0 { result.storedETA = change.storedETA }
        if change.present & Self.locationBit != 0 {
            result.storedLatitudeE6 = change.storedLatitudeE6
            result.storedLongitudeE6 = change.storedLongitudeE6
        }
        result.present |= change.present
        guard let set = change.box else { return result }
        guard let current = box else {
            result.box = set
            return result
        }
        // A change that sets both rare fields, or every one the snapshot has, shares its box instead of copying
        // both into a new one.
        if (current.value.cancellationReason == nil || set.value.cancellationReason != nil)
            && (current.value.toggle == nil || set.value.toggle != nil)
        {
            result.box = set
            return result
        }
        var merged = current.value
        if let reason = set.value.cancellationReason { merged.cancellationReason = reason }
        if let toggle = set.value.toggle { merged.toggle = toggle }
        result.box = ValueBox(merged)
        return result
    }
}
