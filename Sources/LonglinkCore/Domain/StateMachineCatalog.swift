/// Every business line's state machine: what stores validate changes against.
///
/// `StateMachineCatalog.builtIn` holds taxi, express, premium and carpool (see `BuiltInLines`); a deployment
/// may load its own from JSON (`StateMachineCatalog.load(jsonFile:)` in LonglinkStores).
public struct StateMachineCatalog: Hashable, Sendable {
    private let machines: [BusinessLine: StateMachine]
    /// The same machines in an array: a few lines are found faster by comparing names than by hashing.
    private let list: [StateMachine]

    /// A catalog of already validated machines; throws `.duplicateLine` when a line appears twice.
    public init(_ machines: [StateMachine]) throws(StateMachineError) {
        var byLine: [BusinessLine: StateMachine] = [:]
        for machine in machines {
            guard byLine.updateValue(machine, forKey: machine.line) == nil else {
                throw .duplicateLine(machine.line.name)
            }
        }
        self.machines = byLine
        self.list = byLine.keys.sorted().compactMap { byLine[$0] }
    }

    /// Validates every definition and builds the catalog; the first invalid definition's error is thrown.
    public init(definitions: [StateMachineDefinition]) throws(StateMachineError) {
        var machines: [StateMachine] = []
        for definition in definitions { machines.append(try StateMachine(definition)) }
        try self.init(machines)
    }

    /// The built-in lines: taxi, express, premium and carpool.
    public static let builtIn: StateMachineCatalog = {
        do {
            return try StateMachineCatalog(definitions: BuiltInLines.definitions)
        } catch {
            preconditionFailure("built-in state machines are invalid: \(error)")
        }
    }()

    /// The machine of `line`, or nil when the line is unknown.
    public func machine(for line: BusinessLine) -> StateMachine? {
        if list.count > 16 { return machines[line] }
        for machine in list where machine.line == line { return machine }
        return nil
    }

    public static func == (lhs: StateMachineCatalog, rhs: StateMachineCatalog) -> Bool { lhs.machines == rhs.machines }
    public func hash(into hasher: inout Hasher) { hasher.combine(machines) }

    /// Every line, sorted by name.
    public var lines: [BusinessLine] { machines.keys.sorted() }

    /// Every definition, sorted by line (what a JSON file of this catalog holds).
    public var definitions: [StateMachineDefinition] { lines.compactMap { machines[$0]?.definition } }
}
