/// A topic address, written as a URL: `order://<line>/<order-id>` today, other kinds (e.g. `config://…`) later.
///
/// A route has a kind (the URL scheme), a namespace (the host part: the business line for orders) and a key
/// (the single path segment: the order id). Only the canonical text and two offsets into it are stored (24
/// bytes), because a gateway holds a route per subscription, per hub entry and per broker entry: hashing and
/// comparing cost one string comparison, printing costs nothing, and the parts are cut out when asked for.
public struct Route: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The canonical text, `kind://namespace/key`.
    public let text: String
    /// UTF-8 length of the scheme (the `://` follows it).
    private let schemeLength: UInt8
    /// UTF-8 length of the namespace.
    private let namespaceLength: UInt8
    /// Whether the key is `*` (a line-wide route): asked on every delivery, so stored, not read off the text.
    let keyIsWildcard: Bool

    init(scheme: String, namespace: String, key: String) {
        // Copied part by part: a record's route is built on the fan-out path, where interpolation cost ~1,500
        // instructions per record.
        var parts = (scheme, namespace, key)
        let count = scheme.utf8.count + 3 + namespace.utf8.count + 1 + key.utf8.count
        self.text = String(unsafeUninitializedCapacity: count) { out in
            var at = 0
            func append(_ part: UnsafeBufferPointer<UInt8>) {
                guard let source = part.baseAddress, part.count > 0 else { return }
                (out.baseAddress! + at).initialize(from: source, count: part.count)
                at += part.count
            }
            parts.0.withUTF8 { append($0) }
            for byte in "://".utf8 {
                out[at] = byte
                at += 1
            }
            parts.1.withUTF8 { append($0) }
            out[at] = UInt8(ascii: "/")
            at += 1
            parts.2.withUTF8 { append($0) }
            return at
        }
        self.schemeLength = UInt8(scheme.utf8.count)
        self.namespaceLength = UInt8(namespace.utf8.count)
        self.keyIsWildcard = key == "*"
    }

    /// The route's kind, its URL scheme.
    public var kind: RouteKind { RouteKind(validated: part(from: 0, length: Int(schemeLength))) }
    /// The namespace within the kind: the business line for `order://`.
    public var namespace: String { part(from: Int(schemeLength) + 3, length: Int(namespaceLength)) }
    /// The key within the namespace: the order id for `order://`.
    public var key: String {
        let start = Int(schemeLength) + 3 + Int(namespaceLength) + 1
        return part(from: start, length: text.utf8.count - start)
    }

    /// Whether the route's kind is `kind`, without building the kind's string.
    public func hasKind(_ kind: RouteKind) -> Bool {
        Int(schemeLength) == kind.utf8Count && kind.withUTF8 { text.utf8.starts(with: $0) }
    }

    /// Whether the route is of `kind` in `namespace`, without building strings.
    public func isIn(_ kind: RouteKind, namespace: String) -> Bool {
        guard hasKind(kind), Int(namespaceLength) == namespace.utf8.count else { return false }
        return text.utf8.dropFirst(Int(schemeLength) + 3).starts(with: namespace.utf8)
    }

    private func part(from offset: Int, length: Int) -> String {
        let utf8 = text.utf8
        let start = utf8.index(utf8.startIndex, offsetBy: offset)
        let end = utf8.index(start, offsetBy: length)
        return String(text[start..<end])
    }

    /// The route of one order.
    public static func order(_ line: BusinessLine, _ id: OrderID) -> Route {
        Route(scheme: "order", namespace: line.name, key: id.rawValue)
    }

    /// Parses a route URL, rejecting anything that is not `kind://namespace/key` with valid parts.
    public init(parsing text: String) throws(RouteError) {
        guard let separator = text.firstRange(of: "://") else { throw .missingScheme(text) }
        let scheme = String(text[..<separator.lowerBound])
        guard RouteKind(scheme) != nil else { throw .invalidScheme(text) }
        let rest = text[separator.upperBound...]
        let parts = rest.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2 else { throw .wrongShape(text) }
        let namespace = String(parts[0])
        let key = String(parts[1])
        guard Identifier.isValid(namespace, maxLength: 32, lowercaseOnly: true) else {
            throw .invalidNamespace(text)
        }
        guard Identifier.isValid(key, maxLength: 64) else { throw .invalidKey(text) }
        self.init(scheme: scheme, namespace: namespace, key: key)
    }

    /// The route of a record of `kind` whose namespace is `line` and key `id` (both already valid route parts).
    static func record(_ kind: RouteKind, _ line: BusinessLine, _ id: OrderID) -> Route {
        Route(scheme: kind.scheme, namespace: line.name, key: id.rawValue)
    }

    /// For a route that carries records (`order://` and `config://`), its namespace and key as the record's line
    /// and id: a feature toggle travels as a record whose "line" is its app and "order id" its name.
    /// Every route's parts were validated when it was made (parsed, or built from a valid line and id), so they
    /// are not validated again here (the push encoder asks this once per record).
    public var recordKey: (line: BusinessLine, id: OrderID)? {
        guard hasKind(.order) || hasKind(.config) else { return nil }
        return (BusinessLine(validated: namespace), OrderID(validated: key))
    }

    /// For an `order://` route, its business line and order id.
    public var order: (line: BusinessLine, id: OrderID)? {
        guard hasKind(.order) else { return nil }
        return (BusinessLine(validated: namespace), OrderID(validated: key))
    }

    public var description: String { text }
    public static func < (lhs: Route, rhs: Route) -> Bool { lhs.text < rhs.text }
    public static func == (lhs: Route, rhs: Route) -> Bool {
        // The lengths first: a subscription table compares a delivered route with each of its routes, and most
        // differ in length; equal text means equal lengths (the text is canonical).
        lhs.schemeLength == rhs.schemeLength && lhs.namespaceLength == rhs.namespaceLength && lhs.text == rhs.text
    }
    public func hash(into hasher: inout Hasher) { hasher.combine(text) }
}

/// The kind of a route, its URL scheme (`order`, `config`, ...): lower-case letters, 1–16 characters.
///
/// The letters are packed into two words, zero-padded: every record, route key and cell holds a kind, and an
/// inline value is copied, compared and hashed without reference counting (a `String` field cost a retain and a
/// release per copy on the publish path, and a string comparison per key comparison).
public struct RouteKind: Hashable, Sendable, CustomStringConvertible {
    /// Letters 0–7 and 8–15, the first letter in the lowest byte.
    @usableFromInline let low: UInt64
    @usableFromInline let high: UInt64

    /// A kind whose scheme was already checked.
    init(validated scheme: String) {
        var words: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &words) { raw in
            for (index, byte) in scheme.utf8.prefix(16).enumerated() { raw[index] = byte }
        }
        low = UInt64(littleEndian: words.0)
        high = UInt64(littleEndian: words.1)
    }

    /// Creates a kind, or nil when `scheme` is not 1–16 lower-case letters.
    public init?(_ scheme: String) {
        guard !scheme.isEmpty, scheme.utf8.count <= 16,
            scheme.utf8.allSatisfy({ $0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z") })
        else { return nil }
        self.init(validated: scheme)
    }

    /// The scheme without `://` (built on each call: hot paths use `utf8Count` and `withUTF8`).
    public var scheme: String { withUTF8 { String(decoding: $0, as: UTF8.self) } }

    /// The scheme's length in bytes.
    @inlinable public var utf8Count: Int {
        high != 0 ? 16 - high.leadingZeroBitCount / 8 : 8 - low.leadingZeroBitCount / 8
    }

    /// Calls `body` with the scheme's bytes (on the stack: no string is built).
    @inlinable
    public func withUTF8<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        var words = (low.littleEndian, high.littleEndian)
        let count = utf8Count
        return withUnsafeBytes(of: &words) { raw in
            body(UnsafeBufferPointer(start: raw.baseAddress!.assumingMemoryBound(to: UInt8.self), count: count))
        }
    }

    /// Order routes, `order://<line>/<order-id>`.
    public static let order = RouteKind("order")!
    /// Remote feature-toggle routes, `config://<app>/<name>`.
    public static let config = RouteKind("config")!

    public var description: String { scheme }
}

/// Why a route could not be parsed.
public enum RouteError: Error, Hashable, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// No `://` separator.
    case missingScheme(String)
    /// The scheme is not 1–16 lower-case letters.
    case invalidScheme(String)
    /// Not exactly `kind://namespace/key`.
    case wrongShape(String)
    /// The namespace (business line) is empty or has characters outside `[a-z0-9_-]`.
    case invalidNamespace(String)
    /// The key (order id) is empty, too long, or has characters outside `[A-Za-z0-9_.-]`.
    case invalidKey(String)
    /// The route kind is not known to the registry.
    case unknownKind(String)

    public var description: String {
        switch self {
        case .missingScheme(let t): "'\(t)' has no scheme; expected kind://namespace/key, e.g. order://taxi/8812"
        case .invalidScheme(let t): "'\(t)' has an invalid scheme; use 1-16 lower-case letters"
        case .wrongShape(let t): "'\(t)' is not kind://namespace/key, e.g. order://taxi/8812"
        case .invalidNamespace(let t): "'\(t)' has an invalid namespace; use [a-z0-9_-], at most 32"
        case .invalidKey(let t): "'\(t)' has an invalid key; use [A-Za-z0-9_.-], at most 64"
        case .unknownKind(let t): "'\(t)' is of a route kind this gateway does not serve"
        }
    }

    public var debugDescription: String { "RouteError: \(description)" }
}

/// A set of routes a holder may open or an observer watches: an exact route, a whole namespace
/// (`order://taxi/*`), a whole kind (`order://*`), or everything (`*`).
public enum RoutePattern: Hashable, Sendable, CustomStringConvertible {
    /// Exactly one route.
    case exact(Route)
    /// Every route of a kind in one namespace, e.g. all taxi orders.
    case namespace(RouteKind, String)
    /// Every route of a kind.
    case kind(RouteKind)
    /// Every route.
    case all

    /// Parses `*`, `order://*`, `order://taxi/*` or an exact route.
    public init(parsing text: String) throws(RouteError) {
        if text == "*" {
            self = .all
            return
        }
        if text.hasSuffix("://*") {
            guard let kind = RouteKind(String(text.dropLast(4))) else { throw .invalidScheme(text) }
            self = .kind(kind)
            return
        }
        if text.hasSuffix("/*") {
            let probe = try Route(parsing: String(text.dropLast(1)) + "x")
            self = .namespace(probe.kind, probe.namespace)
            return
        }
        self = .exact(try Route(parsing: text))
    }

    /// Whether `route` belongs to this pattern.
    public func matches(_ route: Route) -> Bool {
        switch self {
        case .exact(let r): r == route
        case .namespace(let kind, let namespace): route.isIn(kind, namespace: namespace)
        case .kind(let kind): route.hasKind(kind)
        case .all: true
        }
    }

    public var description: String {
        switch self {
        case .exact(let r): r.text
        case .namespace(let kind, let namespace): "\(kind.scheme)://\(namespace)/*"
        case .kind(let kind): "\(kind.scheme)://*"
        case .all: "*"
        }
    }
}

/// Which route kinds a gateway serves and whether clients may subscribe to each from outside.
public struct RouteRegistry: Sendable {
    /// One kind's policy.
    public struct Entry: Sendable, Hashable {
        /// The kind.
        public var kind: RouteKind
        /// Whether clients connected from outside may subscribe (internal kinds are for backends and nodes only).
        public var allowsExternalSubscribe: Bool

        public init(kind: RouteKind, allowsExternalSubscribe: Bool) {
            self.kind = kind
            self.allowsExternalSubscribe = allowsExternalSubscribe
        }
    }

    private var entries: [RouteKind: Entry]

    public init(_ entries: [Entry]) {
        self.entries = Dictionary(entries.map { ($0.kind, $0) }, uniquingKeysWith: { _, last in last })
    }

    /// The default: order routes and config routes, both open to external subscribers.
    public static let standard = RouteRegistry([
        Entry(kind: .order, allowsExternalSubscribe: true),
        Entry(kind: .config, allowsExternalSubscribe: true),
    ])

    /// The policy of `kind`, or nil when the gateway does not serve it.
    public func entry(for kind: RouteKind) -> Entry? { entries[kind] }

    /// Parses a route and checks that its kind is served.
    public func route(parsing text: String) throws(RouteError) -> Route {
        let route = try Route(parsing: text)
        guard entries[route.kind] != nil else { throw .unknownKind(text) }
        return route
    }
}
