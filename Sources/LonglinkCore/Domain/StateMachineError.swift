/// Why a state machine definition (or a catalog of them) was refused. Every case names the line, and the
/// state when one is at fault.
public enum StateMachineError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The line's name is not a valid business line name.
    case invalidLineName(String)
    /// Two definitions for the same line.
    case duplicateLine(String)
    /// A state name is empty or longer than 64 bytes.
    case invalidStateName(line: String, state: String)
    /// A state is declared twice.
    case duplicateState(line: String, state: String)
    /// The definition names no initial state.
    case noInitialState(line: String)
    /// A state is referenced (as the initial state or as an exit of `from`) but not declared.
    case unknownState(line: String, state: String, referencedFrom: String?)
    /// A state cannot be reached from the initial state.
    case unreachableState(line: String, state: String)
    /// No state is marked terminal: orders of the line could never finish.
    case noTerminalState(line: String)
    /// A terminal state lists exits.
    case terminalStateWithExits(line: String, state: String, next: [String])
    /// A state that is not terminal has no exits: orders would be stuck there.
    case deadEndState(line: String, state: String)

    public var description: String {
        switch self {
        case .invalidLineName(let line):
            "StateMachineError: '\(line)' is not a valid line name; use [a-z0-9_-], at most 32"
        case .duplicateLine(let line): "StateMachineError: line '\(line)' is defined twice"
        case .invalidStateName(let line, let state):
            "StateMachineError: line '\(line)': '\(state)' is not a valid state name (1-64 bytes)"
        case .duplicateState(let line, let state):
            "StateMachineError: line '\(line)': state '\(state)' is declared twice"
        case .noInitialState(let line): "StateMachineError: line '\(line)' has no initial state"
        case .unknownState(let line, let state, let from):
            "StateMachineError: line '\(line)': state '\(state)' referenced "
                + (from.map { "as an exit of '\($0)'" } ?? "as the initial state") + " is not declared"
        case .unreachableState(let line, let state):
            "StateMachineError: line '\(line)': state '\(state)' cannot be reached from the initial state"
        case .noTerminalState(let line): "StateMachineError: line '\(line)' has no terminal state"
        case .terminalStateWithExits(let line, let state, let next):
            "StateMachineError: line '\(line)': terminal state '\(state)' has exits \(next.joined(separator: ", "))"
        case .deadEndState(let line, let state):
            "StateMachineError: line '\(line)': state '\(state)' has no exits but is not marked terminal"
        }
    }
}
