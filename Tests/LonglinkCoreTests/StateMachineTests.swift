import LonglinkCore
import Testing
import LonglinkTestSupport

@Suite("StateMachine", .ownThreads)
struct StateMachineTests {
    @Test("built-in lines are valid and cover taxi, express, premium and carpool")
    func builtIn() throws {
        let catalog = StateMachineCatalog.builtIn
        #expect(catalog.lines == [.carpool, .express, .premium, .taxi])
        let taxi = try #require(catalog.machine(for: .taxi))
        #expect(taxi.initialState == BuiltInLines.created)
        #expect(taxi.allows(from: BuiltInLines.driverArriving, to: BuiltInLines.dispatching))
        #expect(taxi.allows(from: BuiltInLines.dispatching, to: BuiltInLines.noDriverTimeout))
        #expect(!taxi.allows(from: BuiltInLines.inTrip, to: BuiltInLines.cancelled))
        #expect(taxi.isTerminal(BuiltInLines.paid) && taxi.isTerminal(BuiltInLines.cancelled))
        #expect(taxi.requiredFields(for: BuiltInLines.cancelled) == [.cancellationReason])
        #expect(taxi.requiredFields(for: BuiltInLines.driverAssigned) == [.driverID])
        let premium = try #require(catalog.machine(for: .premium))
        #expect(premium.allows(from: BuiltInLines.reserved, to: BuiltInLines.dispatching))
        let carpool = try #require(catalog.machine(for: .carpool))
        #expect(carpool.allows(from: BuiltInLines.matching, to: BuiltInLines.poolMatched))
        #expect(!(try #require(catalog.machine(for: .express))).contains(BuiltInLines.driverArrived))
    }

    static let cases: [(String, StateMachineDefinition, StateMachineError)] = [
        (
            "unknown state referenced",
            StateMachineDefinition(
                line: "bus",
                initial: "a",
                states: [StateDefinition("a", next: ["b", "ghost"]), StateDefinition("b", terminal: true)]
            ),
            .unknownState(line: "bus", state: "ghost", referencedFrom: "a")
        ),
        (
            "unknown initial state",
            StateMachineDefinition(line: "bus", initial: "start", states: [StateDefinition("a", terminal: true)]),
            .unknownState(line: "bus", state: "start", referencedFrom: nil)
        ),
        (
            "unreachable state",
            StateMachineDefinition(
                line: "bus",
                initial: "a",
                states: [
                    StateDefinition("a", next: ["b"]), StateDefinition("b", terminal: true),
                    StateDefinition("island", next: ["b"]),
                ]
            ),
            .unreachableState(line: "bus", state: "island")
        ),
        (
            "no terminal state",
            StateMachineDefinition(
                line: "bus",
                initial: "a",
                states: [StateDefinition("a", next: ["b"]), StateDefinition("b", next: ["a"])]
            ),
            .noTerminalState(line: "bus")
        ),
        (
            "terminal state with exits",
            StateMachineDefinition(
                line: "bus",
                initial: "a",
                states: [StateDefinition("a", next: ["b"]), StateDefinition("b", next: ["a"], terminal: true)]
            ),
            .terminalStateWithExits(line: "bus", state: "b", next: ["a"])
        ),
        (
            "no initial state",
            StateMachineDefinition(line: "bus", initial: "", states: [StateDefinition("a", terminal: true)]),
            .noInitialState(line: "bus")
        ),
        (
            "dead end",
            StateMachineDefinition(
                line: "bus",
                initial: "a",
                states: [
                    StateDefinition("a", next: ["b", "c"]), StateDefinition("b"), StateDefinition("c", terminal: true),
                ]
            ),
            .deadEndState(line: "bus", state: "b")
        ),
        (
            "duplicate state",
            StateMachineDefinition(
                line: "bus",
                initial: "a",
                states: [StateDefinition("a", terminal: true), StateDefinition("a", terminal: true)]
            ),
            .duplicateState(line: "bus", state: "a")
        ),
        (
            "invalid line name",
            StateMachineDefinition(line: "Bus Line", initial: "a", states: [StateDefinition("a", terminal: true)]),
            .invalidLineName("Bus Line")
        ),
    ]

    @Test("each invalid definition is refused with an error naming its line and state", arguments: 0..<cases.count)
    func invalid(_ index: Int) {
        let (_, definition, expected) = Self.cases[index]
        #expect(throws: expected) { try StateMachine(definition) }
        #expect("\(expected)".contains("bus") || "\(expected)".contains("Bus Line"))
    }

    @Test("a catalog refuses two machines for one line")
    func duplicateLine() {
        #expect(throws: StateMachineError.duplicateLine("taxi")) {
            try StateMachineCatalog(definitions: [BuiltInLines.taxi, BuiltInLines.taxi])
        }
    }

    @Test("unknown lines have no machine")
    func unknownLine() throws {
        #expect(StateMachineCatalog.builtIn.machine(for: try #require(BusinessLine("bus"))) == nil)
    }
}

@Suite("ChangeValidation", .ownThreads)
struct ChangeValidationTests {
    @Test("builds the next record and snapshot without going back in time")
    func prepare() throws {
        let id = try #require(OrderID("o1"))
        let first = try ChangeValidation.prepare(
            OrderChange(orderID: id, line: .taxi, targetState: BuiltInLines.created),
            current: nil,
            catalog: .builtIn,
            epoch: 9,
            nowMillis: 5_000
        )
        #expect(first.record.position == StreamPosition(epoch: 9, offset: 1) && first.record.fromState == nil)
        let second = try ChangeValidation.prepare(
            OrderChange(orderID: id, line: .taxi, targetState: BuiltInLines.dispatching),
            current: first.snapshot,
            catalog: .builtIn,
            epoch: 9,
            nowMillis: 4_000
        )
        #expect(second.record.timestampMillis == 5_000)
        #expect(second.snapshot.position.offset == 2 && second.snapshot.createdAtMillis == 5_000)
    }

    @Test("history windows: expired, up to date, or from an offset")
    func window() {
        #expect(
            ChangeValidation.window(after: .zero, epoch: 3, firstOffset: 1, lastOffset: 4, limit: 10)
                == .from(offset: 1, limit: 10)
        )
        #expect(ChangeValidation.window(after: .zero, epoch: 3, firstOffset: 2, lastOffset: 4, limit: 10) == .expired)
        #expect(
            ChangeValidation.window(
                after: StreamPosition(epoch: 2, offset: 1),
                epoch: 3,
                firstOffset: 1,
                lastOffset: 4,
                limit: 10
            ) == .expired
        )
        #expect(
            ChangeValidation.window(
                after: StreamPosition(epoch: 3, offset: 4),
                epoch: 3,
                firstOffset: 1,
                lastOffset: 4,
                limit: 10
            ) == .upToDate
        )
        #expect(
            ChangeValidation.window(
                after: StreamPosition(epoch: 3, offset: 5),
                epoch: 3,
                firstOffset: 1,
                lastOffset: 4,
                limit: 10
            ) == .expired
        )
        #expect(
            ChangeValidation.window(
                after: StreamPosition(epoch: 3, offset: 1),
                epoch: 3,
                firstOffset: 2,
                lastOffset: 4,
                limit: 10
            ) == .from(offset: 2, limit: 10)
        )
    }
}
