/// A business line's lifecycle written as data: what `StateMachine` is built from, and what a JSON file of
/// state machines holds (`StateMachineCatalog.load(jsonFile:)` in LonglinkStores decodes it).
///
/// ```json
/// { "line": "taxi", "initial": "created",
///   "states": [ { "name": "created", "next": ["dispatching", "cancelled"] },
///               { "name": "cancelled", "terminal": true, "requires": ["cancellation_reason"] } ] }
/// ```
/// `next`, `terminal` and `requires` may be left out (no exits, not terminal, nothing required).
public struct StateMachineDefinition: Hashable, Sendable, Codable {
    /// The business line's name (`taxi`).
    public var line: String
    /// The state every order of the line starts in.
    public var initial: String
    /// Every state of the line, with its exits.
    public var states: [StateDefinition]

    public init(line: String, initial: String, states: [StateDefinition]) {
        self.line = line
        self.initial = initial
        self.states = states
    }
}

/// One state of a `StateMachineDefinition`.
public struct StateDefinition: Hashable, Sendable, Codable {
    /// The state's name (`driver_assigned`).
    public var name: String
    /// The states an order may move to from this one.
    public var next: [String]
    /// Whether the lifecycle ends here (a terminal state has no exits and expires after the terminal TTL).
    public var terminal: Bool
    /// Fields a change into this state must carry (e.g. `cancellation_reason` for `cancelled`).
    public var requires: [OrderFieldName]

    public init(_ name: String, next: [String] = [], terminal: Bool = false, requires: [OrderFieldName] = []) {
        self.name = name
        self.next = next
        self.terminal = terminal
        self.requires = requires
    }

    private enum CodingKeys: String, CodingKey {
        case name, next, terminal, requires
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        next = try container.decodeIfPresent([String].self, forKey: .next) ?? []
        terminal = try container.decodeIfPresent(Bool.self, forKey: .terminal) ?? false
        requires = try container.decodeIfPresent([OrderFieldName].self, forKey: .requires) ?? []
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        if !next.isEmpty { try container.encode(next, forKey: .next) }
        if terminal { try container.encode(terminal, forKey: .terminal) }
        if !requires.isEmpty { try container.encode(requires, forKey: .requires) }
    }
}

/// The name of an `OrderFields` member, as state machine definitions spell it.
public enum OrderFieldName: String, Hashable, Sendable, Codable, CaseIterable, CustomStringConvertible {
    /// `OrderFields.driverID`.
    case driverID = "driver_id"
    /// `OrderFields.etaSeconds`.
    case etaSeconds = "eta_seconds"
    /// `OrderFields.location`.
    case location
    /// `OrderFields.cancellationReason`.
    case cancellationReason = "cancellation_reason"
    /// `OrderFields.payload` (non-empty).
    case payload

    public var description: String { rawValue }

    /// Whether `fields` sets this field.
    public func isSet(in fields: OrderFields) -> Bool {
        switch self {
        case .driverID: fields.driverID != nil
        case .etaSeconds: fields.etaSeconds != nil
        case .location: fields.location != nil
        case .cancellationReason: fields.cancellationReason != nil
        case .payload: !fields.payload.isEmpty
        }
    }
}
