/// The lifecycle of one business line's orders: its states, the initial one, which moves are allowed, which
/// states end the lifecycle and which fields a change into a state must carry.
///
/// Built from a `StateMachineDefinition` (data), which it validates: every referenced state is declared, every
/// state is reachable from the initial state, at least one state is terminal, terminal states have no exits and
/// other states have at least one. Lookups are array-indexed after one hash of the state name.
public struct StateMachine: Hashable, Sendable {
    /// The compiled tables, shared by every copy (copying a machine is one retain).
    private let tables: Tables

    /// Validates `definition` and builds the machine.
    public init(_ definition: StateMachineDefinition) throws(StateMachineError) {
        tables = try Tables(definition)
    }

    /// The business line this machine governs.
    public var line: BusinessLine { tables.line }
    /// The state every order starts in.
    public var initialState: OrderState { tables.states[tables.initialIndex] }
    /// The definition this machine was built from.
    public var definition: StateMachineDefinition { tables.definition }
    /// Every state, in declaration order.
    public var states: [OrderState] { tables.states }

    /// Whether `state` belongs to this machine.
    public func contains(_ state: OrderState) -> Bool { tables.index(of: state) != nil }

    /// The states an order in `state` may move to (empty for terminal or unknown states).
    public func allowedNext(from state: OrderState) -> [OrderState] {
        guard let i = tables.index(of: state) else { return [] }
        return tables.exits[i]
    }

    /// Whether an order in `from` may move to `to`.
    public func allows(from: OrderState, to: OrderState) -> Bool {
        guard let i = tables.index(of: from), let j = tables.index(of: to) else { return false }
        return tables.allows(i, j)
    }

    /// Whether `state` ends the lifecycle.
    public func isTerminal(_ state: OrderState) -> Bool {
        guard let i = tables.index(of: state) else { return false }
        return tables.terminal[i]
    }

    /// The fields a change into `state` must carry.
    public func requiredFields(for state: OrderState) -> [OrderFieldName] {
        guard let i = tables.index(of: state) else { return [] }
        return tables.required[i]
    }

    // Index-based access for ChangeValidation's hot path: one lookup per state.
    func index(of state: OrderState) -> Int? { tables.index(of: state) }
    var initialIndex: Int { tables.initialIndex }
    func allows(fromIndex: Int, toIndex: Int) -> Bool { tables.allows(fromIndex, toIndex) }
    func allowedNext(fromIndex: Int) -> [OrderState] { tables.exits[fromIndex] }
    func requiredFields(atIndex index: Int) -> [OrderFieldName] { tables.required[index] }
    func isTerminal(atIndex index: Int) -> Bool { tables.terminal[index] }

    public static func == (lhs: StateMachine, rhs: StateMachine) -> Bool {
        lhs.tables === rhs.tables || lhs.tables.definition == rhs.tables.definition
    }
    public func hash(into hasher: inout Hasher) { hasher.combine(tables.definition) }
}

/// A validated machine's lookup tables. Immutable after init.
private final class Tables: Sendable {
    let line: BusinessLine
    let definition: StateMachineDefinition
    let states: [OrderState]
    /// Each state's name hash, scanned before comparing names.
    let stateHashes: [UInt64]
    let initialIndex: Int
    /// Used instead of a linear scan when there are many states.
    let indexes: [OrderState: Int]
    let exits: [[OrderState]]
    /// `allowed[from * count + to]`.
    let allowed: [Bool]
    let terminal: [Bool]
    let required: [[OrderFieldName]]

    init(_ definition: StateMachineDefinition) throws(StateMachineError) {
        let name = definition.line
        guard let line = BusinessLine(name) else { throw .invalidLineName(name) }
        guard !definition.initial.isEmpty else { throw .noInitialState(line: name) }
        var indexes: [OrderState: Int] = [:]
        for (i, state) in definition.states.enumerated() {
            guard !state.name.isEmpty, state.name.utf8.count <= 64 else {
                throw .invalidStateName(line: name, state: state.name)
            }
            guard indexes.updateValue(i, forKey: OrderState(state.name)) == nil else {
                throw .duplicateState(line: name, state: state.name)
            }
        }
        guard let initialIndex = indexes[OrderState(definition.initial)] else {
            throw .unknownState(line: name, state: definition.initial, referencedFrom: nil)
        }
        let count = definition.states.count
        var allowed = [Bool](repeating: false, count: count * count)
        var exits: [[OrderState]] = []
        for (i, state) in definition.states.enumerated() {
            if state.terminal && !state.next.isEmpty {
                throw .terminalStateWithExits(line: name, state: state.name, next: state.next)
            }
            if !state.terminal && state.next.isEmpty { throw .deadEndState(line: name, state: state.name) }
            var list: [OrderState] = []
            for next in state.next {
                guard let j = indexes[OrderState(next)] else {
                    throw .unknownState(line: name, state: next, referencedFrom: state.name)
                }
                if !allowed[i * count + j] { list.append(OrderState(next)) }
                allowed[i * count + j] = true
            }
            exits.append(list)
        }
        guard definition.states.contains(where: \.terminal) else { throw .noTerminalState(line: name) }
        // Walk from the initial state; the first unvisited state in declaration order is reported.
        var reached = [Bool](repeating: false, count: count)
        reached[initialIndex] = true
        var queue = [initialIndex]
        while let i = queue.popLast() {
            for j in 0..<count where allowed[i * count + j] && !reached[j] {
                reached[j] = true
                queue.append(j)
            }
        }
        if let lost = reached.firstIndex(of: false) {
            throw .unreachableState(line: name, state: definition.states[lost].name)
        }
        self.line = line
        self.definition = definition
        self.states = definition.states.map { OrderState($0.name) }
        self.stateHashes = states.map(\.nameHash)
        self.initialIndex = initialIndex
        self.indexes = indexes
        self.exits = exits
        self.allowed = allowed
        self.terminal = definition.states.map(\.terminal)
        self.required = definition.states.map(\.requires)
    }

    /// A state's index: a scan of the name hashes for small machines, the dictionary for large ones.
    func index(of state: OrderState) -> Int? {
        if states.count > 24 { return indexes[state] }
        let hash = state.nameHash
        for i in stateHashes.indices where stateHashes[i] == hash && states[i].name == state.name { return i }
        return nil
    }

    func allows(_ from: Int, _ to: Int) -> Bool { allowed[from * states.count + to] }
}

extension StateMachine: Codable {
    /// Decodes a definition and validates it (a `StateMachineError` is thrown for an invalid one).
    public init(from decoder: any Decoder) throws {
        try self.init(StateMachineDefinition(from: decoder))
    }

    /// Encodes the definition.
    public func encode(to encoder: any Encoder) throws { try definition.encode(to: encoder) }
}
