/// A route as its three parts (kind, namespace, key) for lookups on the fan-out path: made from a record without
/// building the route's text (`OrderChangeRecord.route` allocates a string of 20-odd bytes per record), hashed by
/// the order id's precomputed hash (8 bytes), and equal exactly when the two routes are equal.
///
/// The broker's and the hubs' tables are keyed by it; a `Route` (a subscription) gives its key once, when it is
/// subscribed. A line-wide route (`order://taxi/*`) has the key `*`, which no order id can have.
public struct RouteKey: Hashable, Sendable {
    /// The route's kind (`order`, `config`).
    public let kind: RouteKind
    /// The namespace: the business line (or a toggle's app).
    public let line: BusinessLine
    /// The key: the order id (or a toggle's name), `*` for a line-wide route.
    public let id: OrderID

    /// The key of the route `record` is pushed on (no string is built).
    public init(_ record: OrderChangeRecord) {
        let cell = record.cell.value
        self.kind = cell.kind
        self.line = cell.line
        self.id = cell.orderID
    }

    /// The key of `route` (its parts are cut out of its text: for subscribing, not per record).
    public init(_ route: Route) {
        self.kind = route.kind
        self.line = BusinessLine(validated: route.namespace)
        self.id = OrderID(validated: route.key)
    }

    /// The key of the line-wide route covering this one (`order://taxi/*` for `order://taxi/8812`).
    public var lineWide: RouteKey { RouteKey(kind: kind, line: line, id: Self.lineWideID) }

    /// Whether this is a line-wide route's key.
    public var isLineWide: Bool { id == Self.lineWideID }

    /// The route itself (builds its text).
    public var route: Route { Route(scheme: kind.scheme, namespace: line.name, key: id.rawValue) }

    private init(kind: RouteKind, line: BusinessLine, id: OrderID) {
        self.kind = kind
        self.line = line
        self.id = id
    }

    private static let lineWideID = OrderID(validated: "*")

    public static func == (lhs: RouteKey, rhs: RouteKey) -> Bool {
        lhs.id == rhs.id && lhs.line == rhs.line && lhs.kind == rhs.kind
    }

    /// The order id's hash alone: keys that differ only in line or kind are rare and told apart by `==`.
    public func hash(into hasher: inout Hasher) { hasher.combine(id.textHash) }

    /// What a `Dictionary` keyed by route keys (each loop's hub, looked up once per pushed record) takes as the hash:
    /// the order id's hash, already 64 well-mixed bits seeded per process, folded with the table's seed by a few
    /// multiplies instead of a run of SipHash (`Hasher`), which cost as much as the rest of the lookup.
    public func _rawHashValue(seed: Int) -> Int {
        var mixed = id.textHash ^ UInt64(UInt(bitPattern: seed))
        mixed = (mixed ^ (mixed >> 32)) &* 0xD6E8_FEB8_6659_FD93
        mixed = (mixed ^ (mixed >> 32)) &* 0xD6E8_FEB8_6659_FD93
        return Int(truncatingIfNeeded: mixed ^ (mixed >> 32))
    }

    /// A 64-bit digest of the kind, the line and the id: equal keys have equal digests, and different keys share one
    /// only by a 64-bit collision. For tables that answer "may someone want this?" (a superset is fine there: the
    /// hub decides who gets a push) and must stay small: a digest takes 8 bytes where a key takes 56.
    public var filterDigest: UInt64 { Self.digest(kind, lineHash: line.nameHash, idHash: id.textHash) }

    /// The `filterDigest` of the route `record` is pushed on, read off the record's cell: no key is made, so no
    /// string is retained and released (what the broker's and the loop masks' lookups take per record).
    public static func filterDigest(of record: OrderChangeRecord) -> UInt64 {
        let cell = record.cell
        return digest(cell.value.kind, lineHash: cell.value.line.nameHash, idHash: cell.value.orderID.textHash)
    }

    /// The `filterDigest` of the line-wide route covering `record`'s (`order://taxi/*` for a record of
    /// `order://taxi/8812`).
    public static func lineWideFilterDigest(of record: OrderChangeRecord) -> UInt64 {
        let cell = record.cell
        return digest(cell.value.kind, lineHash: cell.value.line.nameHash, idHash: lineWideID.textHash)
    }

    @inline(__always)
    private static func digest(_ kind: RouteKind, lineHash: UInt64, idHash: UInt64) -> UInt64 {
        var digest = idHash ^ (lineHash &* 0x9E37_79B9_7F4A_7C15)
        if kind != .order { digest ^= kind.withUTF8 { IdentifierHash.hash($0) } &* 0xC2B2_AE3D_27D4_EB4F }
        return digest
    }
}
