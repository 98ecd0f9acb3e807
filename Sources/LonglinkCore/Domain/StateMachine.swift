/// The lifecycle of one business line's orders: its states, the initial one, which moves are allowed, which
/// states end the lifecycle and which fields a change into a state must carry.
///
/// Built from a `StateMachineDefinition` (data), which it validates: every referenced state is declared, every
/// state is reachable from the initial state, at least one state is terminal, terminal states have no exits and
/// other states have at least one. Lookups are array-indexed after one hash of the state name.
public struct StateMachine: Hashable, Sendable {
    /// The business line this machine governs.
    public let line: BusinessLine
    /// The state every order starts in.
    public let initialState: OrderState
    /// The definition this machine was built from.
    public let definition: StateMachineDefinition

    private let indexes: [OrderState: Int]
    private let stateList: [OrderState]
    private let exits: [[OrderState]]
    /// `allowed[from * count + to]`.
    private let allowed: [Bool]
    private let terminal: [Bool]
    private let required: [[OrderFieldName]]

    /// Validates `definition` and builds the machine.
    public init(_ definition: StateMachineDefinition) throws(StateMachineError) {
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
        // Breadth-first walk from the initial state; the first unvisited state in declaration order is reported.
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
        self.initialState = OrderState(definition.initial)
        self.definition = definition
        self.indexes = indexes
        self.stateList = definition.states.map { OrderState($0.name) }
        self.exits = exits
        self.allowed = allowed
        self.terminal = definition.states.map(\.terminal)
        self.required = definition.states.map(\.requires)
    }

    /// Every state, in declaration order.
    public var states: [OrderState] { stateList }

    /// Whether `state` belongs to this machine.
    public func contains(_ state: OrderState) -> Bool { indexes[state] != nil }

    /// The states an order in `state` may move to (empty for terminal or unknown states).
    public func allowedNext(from state: OrderState) -> [OrderState] {
        guard let i = indexes[state] else { return [] }
        return exits[i]
    }

    /// Whether an order in `from` may move to `to`.
    public func allows(from: OrderState, to: OrderState) -> Bool {
        guard let i = indexes[from], let j = indexes[to] else { return false }
        return allowed[i * stateList.count + j]
    }

    /// Whether `state` ends the lifecycle.
    public func isTerminal(_ state: OrderState) -> Bool {
        guard let i = indexes[state] else { return false }
        return terminal[i]
    }

    /// The fields a change into `state` must carry.
    public func requiredFields(for state: OrderState) -> [OrderFieldName] {
        guard let i = indexes[state] else { return [] }
        return required[i]
    }

    /// The machine's compiled view of one state, for hot paths that need several facts at one lookup.
    struct Entry {
        let index: Int
        let terminal: Bool
        let required: [OrderFieldName]
    }

    func entry(_ state: OrderState) -> Entry? {
        guard let i = indexes[state] else { return nil }
        return Entry(index: i, terminal: terminal[i], required: required[i])
    }

    func allows(fromIndex: Int, toIndex: Int) -> Bool { allowed[fromIndex * stateList.count + toIndex] }

    func allowedNext(fromIndex: Int) -> [OrderState] { exits[fromIndex] }

    public static func == (lhs: StateMachine, rhs: StateMachine) -> Bool { lhs.definition == rhs.definition }
    public func hash(into hasher: inout Hasher) { hasher.combine(definition) }
}

extension StateMachine: Codable {
    /// Decodes a definition and validates it (a `StateMachineError` is thrown for an invalid one).
    public init(from decoder: any Decoder) throws {
        try self.init(StateMachineDefinition(from: decoder))
    }

    /// Encodes the definition.
    public func encode(to encoder: any Encoder) throws { try definition.encode(to: encoder) }
}
