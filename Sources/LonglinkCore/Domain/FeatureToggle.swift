/// A remote feature toggle: a named value an operator sets and every subscribed app receives on
/// `config://<app>/<name>`, so features switch on and off without a release.
public struct FeatureToggle: Hashable, Sendable {
    /// `config://<app>/<name>`: the toggle's address, validated when the toggle was made.
    public let route: Route
    /// Its value.
    public var value: ToggleValue
    /// Position in the toggle's history (offsets increase per toggle, like an order's).
    public var position: StreamPosition
    /// When it was last set (ms since the Unix epoch).
    public var updatedAtMillis: UInt64

    /// Creates a toggle; nil when `app` or `name` is not a valid route part.
    public init?(app: String, name: String, value: ToggleValue, position: StreamPosition = .zero, updatedAtMillis: UInt64 = 0) {
        guard let route = try? Route(parsing: "config://\(app)/\(name)") else { return nil }
        self.route = route
        self.value = value
        self.position = position
        self.updatedAtMillis = updatedAtMillis
    }

    /// The application (the route's namespace): `[a-z0-9_-]`, at most 32.
    public var app: String { route.namespace }
    /// The toggle's name (the route's key): `[A-Za-z0-9_.-]`, at most 64.
    public var name: String { route.key }

    /// The state every toggle record moves to.
    public static let setState: OrderState = "set"

    /// The toggle as a record on its route, which is how it travels to subscribers (the push path carries
    /// records): the app in the record's line, the name in its id, state `set`, the value in `fields.toggle`.
    public var record: OrderChangeRecord {
        OrderChangeRecord(
            orderID: OrderID(validated: route.key),
            line: BusinessLine(validated: route.namespace),
            fromState: position.offset > 1 ? Self.setState : nil,
            toState: Self.setState,
            fields: OrderFields(toggle: value),
            position: position,
            timestampMillis: updatedAtMillis,
            kind: .config
        )
    }

    /// The toggle as a snapshot on its route (what a subscribe answers).
    public var snapshot: OrderSnapshot {
        OrderSnapshot(
            orderID: OrderID(validated: route.key),
            line: BusinessLine(validated: route.namespace),
            state: Self.setState,
            fields: OrderFields(toggle: value),
            position: position,
            createdAtMillis: updatedAtMillis,
            updatedAtMillis: updatedAtMillis,
            kind: .config
        )
    }

    /// The toggle a record or snapshot on a `config://` route carries; nil for anything else.
    public init?(route: Route, fields: OrderFields, position: StreamPosition, updatedAtMillis: UInt64) {
        guard route.hasKind(.config), let value = fields.toggle else { return nil }
        self.route = route
        self.value = value
        self.position = position
        self.updatedAtMillis = updatedAtMillis
    }

    /// Whether the feature is on for `userID`: a boolean as set; a rollout when the user's stable bucket
    /// (`ToggleValue.bucket`) is below the percentage; a string when it is non-empty and not `off`/`false`/`0`.
    public func isEnabled(for userID: String) -> Bool { value.isEnabled(toggle: name, userID: userID) }
}

/// The value of a feature toggle.
public enum ToggleValue: Hashable, Sendable, CustomStringConvertible {
    /// On or off for everyone.
    case bool(Bool)
    /// On for this percentage (0–100) of users, chosen by a stable hash of the user id and toggle name.
    case rollout(percent: Int)
    /// A string value (a variant name, a URL, a number as text).
    case string(String)

    /// Parses the command-line form: `true`/`on`, `false`/`off`, `NN%` (a rollout), anything else a string.
    public init(parsing text: String) {
        switch text.lowercased() {
        case "true", "on", "yes": self = .bool(true)
        case "false", "off", "no": self = .bool(false)
        default:
            if text.hasSuffix("%"), let percent = Int(text.dropLast()), (0...100).contains(percent) {
                self = .rollout(percent: percent)
            } else {
                self = .string(text)
            }
        }
    }

    public var description: String {
        switch self {
        case .bool(let on): on ? "true" : "false"
        case .rollout(let percent): "\(percent)%"
        case .string(let text): text
        }
    }

    /// Whether the value turns the feature on for `userID`.
    public func isEnabled(toggle name: String, userID: String) -> Bool {
        switch self {
        case .bool(let on): on
        case .rollout(let percent): Self.bucket(userID: userID, toggle: name) < percent
        case .string(let text): !text.isEmpty && !["off", "false", "0"].contains(text.lowercased())
        }
    }

    /// The user's stable bucket 0–99 for a toggle: FNV-1a (64-bit) over `name`, a NUL, and the user id. The same on
    /// every device and server (Swift's `Hasher` is seeded per process, so it cannot be used).
    public static func bucket(userID: String, toggle name: String) -> Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in name.utf8 + [0] + userID.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return Int(hash % 100)
    }
}
