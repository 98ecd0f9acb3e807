import LonglinkCore
import Testing

/// The behaviour every `OrderStore` must show, as plain functions taking a factory (centrifuge's
/// `map_broker_shared_test.go`). Each implementation's test target runs all of `checks`:
///
/// ```swift
/// @Test("keeps the OrderStore contract", arguments: OrderStoreContract.checks)
/// func contract(_ check: OrderStoreContractCheck) throws { try check.run(.memory) }
/// ```
public enum OrderStoreContract {
    /// Every check, in a stable order.
    public static let checks: [OrderStoreContractCheck] = [
        OrderStoreContractCheck("a legal lifecycle is stored with contiguous offsets", run: legalLifecycle),
        OrderStoreContractCheck("an illegal transition is refused and changes nothing", run: illegalTransition),
        OrderStoreContractCheck("unknown orders, lines and states are refused", run: unknownOrderLineState),
        OrderStoreContractCheck("invalid and missing required fields are refused", run: invalidFields),
        OrderStoreContractCheck("a repeated idempotency key returns the first record", run: idempotency),
        OrderStoreContractCheck(
            "a used idempotency key with a different change is refused as a conflict and stores nothing",
            run: idempotencyConflict
        ),
        OrderStoreContractCheck("offsets start at 1 per order and strictly increase", run: offsetsPerOrder),
        OrderStoreContractCheck("history reads start after a position and honour the limit", run: historySince),
        OrderStoreContractCheck("history reads are expired for other epochs and unknown positions", run: expiredReads),
        OrderStoreContractCheck("history is trimmed to the retained count", run: retentionByCount),
        OrderStoreContractCheck("expire drops history older than the age limit", run: retentionByAge),
        OrderStoreContractCheck("expire removes terminal orders after their TTL", run: retentionTerminalTTL),
        OrderStoreContractCheck("orders(after:) walks every order once in line, id order", run: ordersWalk),
        OrderStoreContractCheck("importOrder round-trips and refuses conflicts unless replacing", run: importRoundTrip),
        OrderStoreContractCheck("importOrder refuses inconsistent data", run: importInvalid),
        OrderStoreContractCheck("applyBatch applies good changes and refuses bad ones in order", run: batchMixed),
        OrderStoreContractCheck("committed records are stored exactly as committed", run: committedAsCommitted),
        OrderStoreContractCheck("a held committed record is a replay; gaps and other histories are refused", run: committedRefusals),
        OrderStoreContractCheck("applyCommittedBatch stores each record on its own and trims history", run: committedBatch),
        OrderStoreContractCheck("importOrder extends an earlier copy, refuses one ahead or diverged, replaces on request", run: importPolicies),
        OrderStoreContractCheck("a shut down store refuses calls", run: closedStore),
        OrderStoreContractCheck("a reopened durable store keeps orders, history, keys and epoch", run: durability),
    ]

    static func make(_ factory: OrderStoreFactory, _ setup: OrderStoreSetup = OrderStoreSetup()) throws
        -> any OrderStore
    {
        try factory.make(setup)
    }

    /// Records created … paid of one taxi order.
    public static func legalLifecycle(_ factory: OrderStoreFactory) throws {
        let setup = OrderStoreSetup()
        let store = try make(factory, setup)
        defer { store.shutdown() }
        var previous: OrderState?
        for (i, change) in OrderFixtures.taxiLifecycle("8812").enumerated() {
            setup.clock.advance(byMillis: 1_000)
            let applied = try store.apply(change)
            #expect(!applied.deduplicated)
            #expect(applied.record.position == StreamPosition(epoch: store.epoch, offset: UInt64(i + 1)))
            #expect(applied.record.fromState == previous)
            #expect(applied.record.toState == change.targetState)
            #expect(applied.record.fields == change.fields)
            #expect(applied.record.timestampMillis == setup.clock.nowMillis())
            #expect(applied.snapshot.position == applied.record.position)
            #expect(applied.snapshot.state == change.targetState)
            previous = change.targetState
        }
        let snapshot = try #require(try store.snapshot(of: .taxi, OrderFixtures.id("8812")))
        #expect(snapshot.state == BuiltInLines.paid)
        #expect(snapshot.position.offset == 8)
        #expect(snapshot.fields.driverID == "driver-8812")
        #expect(snapshot.fields.etaSeconds == 0)
        #expect(snapshot.fields.payload == [1, 2, 3])
        #expect(snapshot.fields.location == GeoPoint(latitudeE6: 31_230_416, longitudeE6: 121_473_701))
        #expect(snapshot.updatedAtMillis - snapshot.createdAtMillis == 7_000)
        let history = try #require(try OrderFixtures.history(store, .taxi, "8812"))
        #expect(history.map(\.position.offset) == Array(1...8))
        #expect(history.map(\.toState) == OrderFixtures.taxiLifecycle("8812").map(\.targetState))
    }

    /// `created → in_trip` is refused with from/to/allowed named, and snapshot and history stay as they were.
    public static func illegalTransition(_ factory: OrderStoreFactory) throws {
        let store = try make(factory)
        defer { store.shutdown() }
        _ = try store.apply(OrderFixtures.change("1", BuiltInLines.created))
        let before = try store.snapshot(of: .taxi, OrderFixtures.id("1"))
        let error = OrderFixtures.storeError { () throws(StoreError) in
            try store.apply(OrderFixtures.change("1", BuiltInLines.inTrip))
        }
        #expect(
            error
                == .illegalTransition(
                    line: .taxi,
                    order: OrderFixtures.id("1"),
                    from: BuiltInLines.created,
                    to: BuiltInLines.inTrip,
                    allowed: [BuiltInLines.dispatching, BuiltInLines.cancelled]
                )
        )
        let text = error.map { "\($0)" } ?? ""
        #expect(text.contains("created") && text.contains("in_trip") && text.contains("dispatching"))
        #expect(try store.snapshot(of: .taxi, OrderFixtures.id("1")) == before)
        #expect(try OrderFixtures.history(store, .taxi, "1")?.count == 1)
        // Recreating an existing order is a transition too, and refused.
        let again = OrderFixtures.storeError { () throws(StoreError) in
            try store.apply(OrderFixtures.change("1", BuiltInLines.created))
        }
        #expect(again?.code == .illegalTransition)
        // A terminal state allows nothing.
        _ = try store.apply(
            OrderFixtures.change("1", BuiltInLines.cancelled, fields: OrderFields(cancellationReason: "rider"))
        )
        let late = OrderFixtures.storeError { () throws(StoreError) in
            try store.apply(OrderFixtures.change("1", BuiltInLines.dispatching))
        }
        guard case .illegalTransition(_, _, let from, _, let allowed) = late else {
            Issue.record("expected illegalTransition, got \(String(describing: late))")
            return
        }
        #expect(from == BuiltInLines.cancelled && allowed.isEmpty)
    }

    /// A first change not to the initial state, an unknown line and an unknown state are refused; nothing is created.
    public static func unknownOrderLineState(_ factory: OrderStoreFactory) throws {
        let store = try make(factory)
        defer { store.shutdown() }
        let notInitial = OrderFixtures.storeError { () throws(StoreError) in
            try store.apply(OrderFixtures.change("2", BuiltInLines.dispatching))
        }
        #expect(notInitial == .unknownOrder(.taxi, OrderFixtures.id("2")))
        let bus = try #require(BusinessLine("bus"))
        let unknownLine = OrderFixtures.storeError { () throws(StoreError) in
            try store.apply(OrderFixtures.change("2", BuiltInLines.created, line: bus))
        }
        #expect(unknownLine == .unknownLine("bus"))
        let unknownState = OrderFixtures.storeError { () throws(StoreError) in
            try store.apply(OrderFixtures.change("2", "teleported"))
        }
        #expect(unknownState == .unknownState(line: .taxi, state: "teleported"))
        // On the wire an unknown state is its own code, not an illegal transition; messages name no Swift type.
        #expect(unknownState?.code == .unknownState)
        #expect(unknownState.map { "\($0)" } == "'teleported' is not a state of line taxi")
        // `reserved` exists in premium but not in taxi.
        let otherLineState = OrderFixtures.storeError { () throws(StoreError) in
            try store.apply(OrderFixtures.change("2", BuiltInLines.reserved))
        }
        #expect(otherLineState == .unknownState(line: .taxi, state: BuiltInLines.reserved))
        #expect(try store.snapshot(of: .taxi, OrderFixtures.id("2")) == nil)
        #expect(try store.orders(after: nil, limit: 10).isEmpty)
        #expect(try store.records(of: .taxi, OrderFixtures.id("2"), after: .zero, limit: 10) == .records([]))
    }

    /// Required fields (driver id, cancellation reason) and field validity (payload, location, lengths).
    public static func invalidFields(_ factory: OrderStoreFactory) throws {
        let store = try make(factory)
        defer { store.shutdown() }
        _ = try store.apply(OrderFixtures.change("3", BuiltInLines.created))
        _ = try store.apply(OrderFixtures.change("3", BuiltInLines.dispatching))
        let refused: [OrderChange] = [
            OrderFixtures.change("3", BuiltInLines.driverAssigned),
            OrderFixtures.change("3", BuiltInLines.cancelled),
            OrderFixtures.change("3", BuiltInLines.driverAssigned, fields: OrderFields(driverID: "")),
            OrderFixtures.change(
                "3",
                BuiltInLines.driverAssigned,
                fields: OrderFields(
                    driverID: "d",
                    payload: [UInt8](repeating: 7, count: OrderFields.maxPayloadBytes + 1)
                )
            ),
            OrderFixtures.change(
                "3",
                BuiltInLines.driverAssigned,
                fields: OrderFields(driverID: "d", location: GeoPoint(latitudeE6: 91_000_000, longitudeE6: 0))
            ),
            OrderFixtures.change(
                "3",
                BuiltInLines.cancelled,
                fields: OrderFields(cancellationReason: String(repeating: "x", count: 10_000))
            ),
            OrderFixtures.change(
                "3",
                BuiltInLines.driverAssigned,
                fields: OrderFields(driverID: "d"),
                key: String(repeating: "k", count: 1_000)
            ),
        ]
        for change in refused {
            let error = OrderFixtures.storeError { () throws(StoreError) in try store.apply(change) }
            #expect(error?.code == .invalidField, "\(change.targetState) \(change.fields)")
        }
        #expect(try store.snapshot(of: .taxi, OrderFixtures.id("3"))?.state == BuiltInLines.dispatching)
        #expect(try OrderFixtures.history(store, .taxi, "3")?.count == 2)
        // A payload of exactly the maximum is accepted.
        let full = OrderFields(driverID: "d", payload: [UInt8](repeating: 7, count: OrderFields.maxPayloadBytes))
        #expect(
            try store.apply(OrderFixtures.change("3", BuiltInLines.driverAssigned, fields: full)).record.position.offset
                == 3
        )
    }

    /// Same key twice returns the first record and stores nothing; keys are per order.
    public static func idempotency(_ factory: OrderStoreFactory) throws {
        let setup = OrderStoreSetup()
        let store = try make(factory, setup)
        defer { store.shutdown() }
        let first = try store.apply(OrderFixtures.change("4", BuiltInLines.created, key: "k1"))
        #expect(first.record.idempotencyKey == "k1")
        setup.clock.advance(byMillis: 500)
        let replay = try store.apply(OrderFixtures.change("4", BuiltInLines.created, key: "k1"))
        #expect(replay.deduplicated)
        #expect(replay.record == first.record)
        let second = try store.apply(OrderFixtures.change("4", BuiltInLines.dispatching, key: "k2"))
        // An older key replayed after later changes still answers its own record, and the current snapshot.
        let oldReplay = try store.apply(OrderFixtures.change("4", BuiltInLines.created, key: "k1"))
        #expect(oldReplay.deduplicated && oldReplay.record == first.record)
        #expect(oldReplay.snapshot == second.snapshot)
        let secondReplay = try store.apply(OrderFixtures.change("4", BuiltInLines.dispatching, key: "k2"))
        #expect(secondReplay.deduplicated && secondReplay.record == second.record)
        #expect(try OrderFixtures.history(store, .taxi, "4")?.count == 2)
        // The same key on another order is that order's own key.
        let other = try store.apply(OrderFixtures.change("5", BuiltInLines.created, key: "k1"))
        #expect(!other.deduplicated && other.record.orderID == OrderFixtures.id("5"))
        // A refused change does not consume its key.
        _ = OrderFixtures.storeError { () throws(StoreError) in
            try store.apply(OrderFixtures.change("4", BuiltInLines.inTrip, key: "k3"))
        }
        let retried = try store.apply(
            OrderFixtures.change("4", BuiltInLines.cancelled, fields: OrderFields(cancellationReason: "r"), key: "k3")
        )
        #expect(!retried.deduplicated && retried.record.position.offset == 3)
    }

    /// A key replayed with another target state or other fields is refused (`idempotencyConflict`, wire code 414)
    /// instead of answering with the first record, and nothing is stored; the same change under the key still
    /// replays, in a batch too.
    public static func idempotencyConflict(_ factory: OrderStoreFactory) throws {
        let store = try make(factory)
        defer { store.shutdown() }
        let route = Route.order(.taxi, OrderFixtures.id("9"))
        let first = try store.apply(OrderFixtures.change("9", BuiltInLines.created, key: "k1"))
        let before = try store.snapshot(of: .taxi, OrderFixtures.id("9"))
        // Another (legal) state under the used key.
        let otherState = OrderFixtures.storeError { () throws(StoreError) in
            try store.apply(OrderFixtures.change("9", BuiltInLines.dispatching, key: "k1"))
        }
        #expect(otherState == .idempotencyConflict(key: "k1", route: route, storedState: BuiltInLines.created))
        #expect(otherState?.code == .idempotencyConflict)
        // The same state with other fields.
        let otherFields = OrderFixtures.storeError { () throws(StoreError) in
            try store.apply(OrderFixtures.change("9", BuiltInLines.created, fields: OrderFields(etaSeconds: 60), key: "k1"))
        }
        #expect(otherFields == .idempotencyConflict(key: "k1", route: route, storedState: BuiltInLines.created))
        // An illegal state under the used key is a conflict too (the key decides first).
        let illegal = OrderFixtures.storeError { () throws(StoreError) in
            try store.apply(OrderFixtures.change("9", BuiltInLines.paid, key: "k1"))
        }
        #expect(illegal?.code == .idempotencyConflict)
        #expect(try store.snapshot(of: .taxi, OrderFixtures.id("9")) == before)
        #expect(try OrderFixtures.history(store, .taxi, "9")?.count == 1)
        let replay = try store.apply(OrderFixtures.change("9", BuiltInLines.created, key: "k1"))
        #expect(replay.deduplicated && replay.record == first.record)
        let batch = store.applyBatch([
            OrderFixtures.change("9", BuiltInLines.dispatching, key: "k2"),
            OrderFixtures.change("9", BuiltInLines.driverAssigned, fields: OrderFields(driverID: "d-1"), key: "k2"),
            OrderFixtures.change("9", BuiltInLines.dispatching, key: "k2"),
        ])
        #expect(try batch[0].get().record.position.offset == 2)
        #expect(OrderFixtures.storeError { () throws(StoreError) in try batch[1].get() }?.code == .idempotencyConflict)
        #expect(try batch[2].get().deduplicated)
        #expect(try OrderFixtures.history(store, .taxi, "9")?.count == 2)
        #expect(try store.snapshot(of: .taxi, OrderFixtures.id("9"))?.state == BuiltInLines.dispatching)
    }

    /// Interleaved orders each count from 1 without gaps.
    public static func offsetsPerOrder(_ factory: OrderStoreFactory) throws {
        let store = try make(factory)
        defer { store.shutdown() }
        let orders = ["a", "b", "c"]
        let lifecycles = orders.map(OrderFixtures.taxiLifecycle)
        for step in 0..<8 {
            for lifecycle in lifecycles {
                #expect(try store.apply(lifecycle[step]).record.position.offset == UInt64(step + 1))
            }
        }
        for order in orders {
            let offsets = try #require(try OrderFixtures.history(store, .taxi, order)).map(\.position.offset)
            #expect(offsets == Array(1...8))
            #expect(
                try OrderFixtures.history(store, .taxi, order)?.allSatisfy { $0.position.epoch == store.epoch } == true
            )
        }
    }

    /// `records(after:limit:)` from a position, with limits.
    public static func historySince(_ factory: OrderStoreFactory) throws {
        let store = try make(factory)
        defer { store.shutdown() }
        for change in OrderFixtures.taxiLifecycle("6") { _ = try store.apply(change) }
        let id = OrderFixtures.id("6")
        let at = { (offset: UInt64) in StreamPosition(epoch: store.epoch, offset: offset) }
        guard case .records(let page) = try store.records(of: .taxi, id, after: at(2), limit: 3) else {
            Issue.record("expected records")
            return
        }
        #expect(page.map(\.position.offset) == [3, 4, 5])
        #expect(page.first?.fromState == BuiltInLines.dispatching)
        #expect(try store.records(of: .taxi, id, after: at(8), limit: 10) == .records([]))
        #expect(try store.records(of: .taxi, id, after: at(2), limit: 0) == .records([]))
        #expect(
            try store.records(of: .taxi, id, after: at(0), limit: 100)
                == store.records(of: .taxi, id, after: .zero, limit: 100)
        )
        guard case .records(let tail) = try store.records(of: .taxi, id, after: at(6), limit: 100) else {
            Issue.record("expected records")
            return
        }
        #expect(tail.map(\.toState) == [BuiltInLines.completed, BuiltInLines.paid])
    }

    /// Another epoch, a position ahead of the history, and an unknown order with a position are all `.expired`.
    public static func expiredReads(_ factory: OrderStoreFactory) throws {
        let store = try make(factory)
        defer { store.shutdown() }
        for change in OrderFixtures.taxiLifecycle("7").prefix(3) { _ = try store.apply(change) }
        let id = OrderFixtures.id("7")
        #expect(
            try store.records(of: .taxi, id, after: StreamPosition(epoch: store.epoch &+ 1, offset: 1), limit: 10)
                == .expired
        )
        #expect(
            try store.records(of: .taxi, id, after: StreamPosition(epoch: store.epoch, offset: 9), limit: 10)
                == .expired
        )
        #expect(
            try store.records(
                of: .taxi,
                OrderFixtures.id("nope"),
                after: StreamPosition(epoch: store.epoch, offset: 2),
                limit: 10
            ) == .expired
        )
        #expect(try store.records(of: .taxi, OrderFixtures.id("nope"), after: .zero, limit: 10) == .records([]))
    }
}
