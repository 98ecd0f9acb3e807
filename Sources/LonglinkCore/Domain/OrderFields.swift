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
/// The payload, the field most changes carry, is held by itself (its array is its only allocation); the other
/// fields share one immutable box (none at all when none is set). So a change that sets the payload alone costs
/// no box, and merging it over a snapshot keeps the snapshot's box: records, snapshots and changes copy their
/// fields with two retains at most, and make no box a payload update does not need.
public struct OrderFields: Hashable, Sendable {
    /// The values, shared by every copy; nil when no field is set.
    /// (`@usableFromInline`: the getters below are inlined into the encoders of other modules, which read every
    /// field of every pushed record.)
    @usableFromInline
    struct Storage: Hashable, Sendable {
        @usableFromInline var driverID: String? = nil
        @usableFromInline var etaSeconds: UInt32? = nil
        @usableFromInline var location: GeoPoint? = nil
        @usableFromInline var cancellationReason: String? = nil
        @usableFromInline var toggle: ToggleValue? = nil

        /// No field set (what `== Storage()` says, without building and comparing a second value).
        var isEmpty: Bool {
            driverID == nil && etaSeconds == nil && location == nil && cancellationReason == nil && toggle == nil
        }
    }

    /// The fields other than the payload; nil when none is set.
    @usableFromInline var box: ValueBox<Storage>?
    /// The payload (empty when unused).
    @usableFromInline var storedPayload: [UInt8]

    /// The assigned driver, once there is one.
    public var driverID: String? {
        @inlinable get { box?.value.driverID ?? nil }
        set { update { $0.driverID = newValue } }
    }
    /// Estimated seconds until the next milestone (pick-up or arrival).
    public var etaSeconds: UInt32? {
        @inlinable get { box?.value.etaSeconds ?? nil }
        set { update { $0.etaSeconds = newValue } }
    }
    /// The driver's (or the order's) current location.
    public var location: GeoPoint? {
        @inlinable get { box?.value.location ?? nil }
        set { update { $0.location = newValue } }
    }
    /// Why the order was cancelled or timed out.
    public var cancellationReason: String? {
        @inlinable get { box?.value.cancellationReason ?? nil }
        set { update { $0.cancellationReason = newValue } }
    }
    /// Opaque application bytes (at most `maxPayloadBytes`), pushed unchanged; empty when unused.
    public var payload: [UInt8] {
        @inlinable get { storedPayload }
        set { storedPayload = newValue }
    }
    /// A feature toggle's value (records on `config://` routes only).
    public var toggle: ToggleValue? {
        @inlinable get { box?.value.toggle ?? nil }
        set { update { $0.toggle = newValue } }
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
        let storage = Storage(
            driverID: driverID,
            etaSeconds: etaSeconds,
            location: location,
            cancellationReason: cancellationReason,
            toggle: toggle
        )
        box = storage.isEmpty ? nil : ValueBox(storage)
        storedPayload = payload
    }

    /// No field set.
    public static let none = OrderFields()

    /// Whether no field is set.
    @inlinable public var isEmpty: Bool { box == nil && storedPayload.isEmpty }

    private mutating func update(_ change: (inout Storage) -> Void) {
        var value = box?.value ?? Storage()
        change(&value)
        box = value.isEmpty ? nil : ValueBox(value)
    }

    public static func == (lhs: OrderFields, rhs: OrderFields) -> Bool {
        guard lhs.storedPayload == rhs.storedPayload else { return false }
        if lhs.box === rhs.box { return true }
        guard let left = lhs.box, let right = rhs.box else { return false }
        return left.value == right.value
    }
    public func hash(into hasher: inout Hasher) {
        hasher.combine(box?.value ?? Storage())
        hasher.combine(storedPayload)
    }

    /// Whether `change` sets every field `current` holds (merging it over `current` then gives `change`).
    @inline(__always)
    private static func covers(_ change: borrowing Storage, _ current: borrowing Storage) -> Bool {
        (current.driverID == nil || change.driverID != nil) && (current.etaSeconds == nil || change.etaSeconds != nil)
            && (current.location == nil || change.location != nil)
            && (current.cancellationReason == nil || change.cancellationReason != nil)
            && (current.toggle == nil || change.toggle != nil)
    }

    /// These fields with every field `change` sets written over them.
    public func merging(_ change: OrderFields) -> OrderFields {
        var result = self
        if !change.storedPayload.isEmpty { result.storedPayload = change.storedPayload }
        guard let set = change.box else { return result }
        guard let current = box else {
            result.box = set
            return result
        }
        // The usual case (a location update over a snapshot holding the same kinds of field): the change sets
        // every boxed field the snapshot has, so the merge shares the change's box instead of copying both into a
        // new one.
        if Self.covers(set.value, current.value) {
            result.box = set
            return result
        }
        var merged = current.value
        if let driverID = set.value.driverID { merged.driverID = driverID }
        if let etaSeconds = set.value.etaSeconds { merged.etaSeconds = etaSeconds }
        if let location = set.value.location { merged.location = location }
        if let reason = set.value.cancellationReason { merged.cancellationReason = reason }
        if let toggle = set.value.toggle { merged.toggle = toggle }
        result.box = ValueBox(merged)
        return result
    }
}
