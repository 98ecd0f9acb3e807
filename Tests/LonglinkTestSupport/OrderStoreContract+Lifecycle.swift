import LonglinkCore
import Testing

extension OrderStoreContract {
    /// With 3 records kept, an 8-record lifecycle keeps offsets 6–8; older positions are expired.
    public static func retentionByCount(_ factory: OrderStoreFactory) throws {
        let store = try make(factory, OrderStoreSetup(retention: StoreRetention(maxRecordsPerOrder: 3)))
        defer { store.shutdown() }
        for change in OrderFixtures.taxiLifecycle("8") { _ = try store.apply(change) }
        let id = OrderFixtures.id("8")
        let at = { (offset: UInt64) in StreamPosition(epoch: store.epoch, offset: offset) }
        #expect(try store.records(of: .taxi, id, after: .zero, limit: 100) == .expired)
        #expect(try store.records(of: .taxi, id, after: at(4), limit: 100) == .expired)
        guard case .records(let kept) = try store.records(of: .taxi, id, after: at(5), limit: 100) else {
            Issue.record("expected records after offset 5")
            return
        }
        #expect(kept.map(\.position.offset) == [6, 7, 8])
        #expect(try store.retainedHistory(of: .taxi, id)?.history == kept)
        #expect(try store.retainedHistory(of: .taxi, OrderFixtures.id("none")) == nil)
        #expect(try store.snapshot(of: .taxi, id)?.position.offset == 8)
        #expect(try store.snapshot(of: .taxi, id)?.fields.driverID == "driver-8")
    }

    /// Records older than the age limit go at `expire`, except each order's latest.
    public static func retentionByAge(_ factory: OrderStoreFactory) throws {
        let setup = OrderStoreSetup(retention: StoreRetention(maxHistoryAgeMillis: 10_000))
        let store = try make(factory, setup)
        defer { store.shutdown() }
        let lifecycle = OrderFixtures.taxiLifecycle("9")
        for change in lifecycle.prefix(3) { _ = try store.apply(change) }
        _ = try store.apply(OrderFixtures.change("old", BuiltInLines.created))
        setup.clock.advance(byMillis: 20_000)
        _ = try store.apply(lifecycle[3])
        #expect(try store.expire(nowMillis: setup.clock.nowMillis()) == 0)
        let at = { (offset: UInt64) in StreamPosition(epoch: store.epoch, offset: offset) }
        #expect(try store.records(of: .taxi, OrderFixtures.id("9"), after: at(1), limit: 10) == .expired)
        guard case .records(let kept) = try store.records(of: .taxi, OrderFixtures.id("9"), after: at(3), limit: 10)
        else {
            Issue.record("expected records after offset 3")
            return
        }
        #expect(kept.map(\.position.offset) == [4])
        // The only record of an idle order is its latest, so it stays; the order stays too (not terminal).
        #expect(try OrderFixtures.history(store, .taxi, "old")?.count == 1)
        #expect(try store.snapshot(of: .taxi, OrderFixtures.id("9"))?.state == BuiltInLines.driverArriving)
    }

    /// A terminal order is removed once its TTL has passed since its last change; others stay.
    public static func retentionTerminalTTL(_ factory: OrderStoreFactory) throws {
        let setup = OrderStoreSetup(retention: StoreRetention(terminalOrderTTLMillis: 5_000))
        let store = try make(factory, setup)
        defer { store.shutdown() }
        _ = try store.apply(OrderFixtures.change("done", BuiltInLines.created))
        _ = try store.apply(
            OrderFixtures.change("done", BuiltInLines.cancelled, fields: OrderFields(cancellationReason: "rider"))
        )
        _ = try store.apply(OrderFixtures.change("live", BuiltInLines.created))
        let start = setup.clock.nowMillis()
        #expect(try store.expire(nowMillis: start + 4_999) == 0)
        #expect(try store.snapshot(of: .taxi, OrderFixtures.id("done")) != nil)
        #expect(try store.expire(nowMillis: start + 5_000) == 1)
        #expect(try store.snapshot(of: .taxi, OrderFixtures.id("done")) == nil)
        #expect(try store.snapshot(of: .taxi, OrderFixtures.id("live")) != nil)
        #expect(try store.orders(after: nil, limit: 10).map(\.orderID) == [OrderFixtures.id("live")])
        #expect(try store.expire(nowMillis: start + 1_000_000_000) == 0)
    }

    /// Pages of 2 visit every order once, sorted by line then id.
    public static func ordersWalk(_ factory: OrderStoreFactory) throws {
        let store = try make(factory)
        defer { store.shutdown() }
        let ids = ["b", "a", "c10", "c2", "Z"]
        for line in [BusinessLine.taxi, .express] {
            for id in ids { _ = try store.apply(OrderFixtures.change(id, BuiltInLines.created, line: line)) }
        }
        var seen: [OrderCursor] = []
        var cursor: OrderCursor?
        for _ in 0..<20 {
            let page = try store.orders(after: cursor, limit: 2)
            #expect(page.count <= 2)
            guard let last = page.last else { break }
            seen += page.map { OrderCursor(line: $0.line, orderID: $0.orderID) }
            cursor = OrderCursor(line: last.line, orderID: last.orderID)
        }
        let expected = [BusinessLine.express, .taxi].flatMap { line in
            ids.sorted().map { OrderCursor(line: line, orderID: OrderFixtures.id($0)) }
        }
        #expect(seen == expected)
        #expect(try store.orders(after: nil, limit: 0).isEmpty)
        // A cursor on an order that does not exist resumes at the next one.
        let resumed = try store.orders(after: OrderCursor(line: .express, orderID: OrderFixtures.id("b0")), limit: 1)
        #expect(resumed.map(\.orderID) == [OrderFixtures.id("c10")])
    }

    /// Import from another store: read back equal (positions in the target's epoch), identical re-import is a
    /// no-op, different data is a conflict unless replacing, applying continues after the imported history.
    public static func importRoundTrip(_ factory: OrderStoreFactory) throws {
        let source = MemoryOrderStore(epoch: 77)
        var lifecycle = OrderFixtures.taxiLifecycle("m1")
        lifecycle[1].idempotencyKey = "dispatch-1"
        for change in lifecycle.prefix(5) { _ = try source.apply(change) }
        let snapshot = try #require(try source.snapshot(of: .taxi, OrderFixtures.id("m1")))
        let history = try #require(try OrderFixtures.history(source, .taxi, "m1"))

        let store = try make(factory)
        defer { store.shutdown() }
        try store.importOrder(snapshot, history: history)
        let copied = try #require(try store.snapshot(of: .taxi, OrderFixtures.id("m1")))
        let copiedHistory = try #require(try OrderFixtures.history(store, .taxi, "m1"))
        #expect(ChangeValidation.isSameOrder((snapshot, history), (copied, copiedHistory)))
        #expect(copied.position == StreamPosition(epoch: store.epoch, offset: 5))
        #expect(copiedHistory.allSatisfy { $0.position.epoch == store.epoch })
        try store.importOrder(snapshot, history: history)  // identical: no-op

        let replay = try store.apply(lifecycle[1])
        #expect(replay.deduplicated && replay.record.position.offset == 2)
        let next = try store.apply(lifecycle[5])
        #expect(next.record.position.offset == 6 && next.record.fromState == BuiltInLines.driverArrived)

        let conflict = OrderFixtures.storeError { () throws(StoreError) in
            try store.importOrder(snapshot, history: history)
        }
        guard case .conflict = conflict else {
            Issue.record("expected conflict, got \(String(describing: conflict))")
            return
        }
        try store.importOrder(snapshot, history: history, policy: .replace)
        #expect(try store.snapshot(of: .taxi, OrderFixtures.id("m1"))?.position.offset == 5)
        #expect(try OrderFixtures.history(store, .taxi, "m1")?.count == 5)
    }

    /// Empty history, a history that does not end at the snapshot, gaps and unknown lines are refused.
    public static func importInvalid(_ factory: OrderStoreFactory) throws {
        let source = MemoryOrderStore()
        for change in OrderFixtures.taxiLifecycle("m2").prefix(3) { _ = try source.apply(change) }
        let snapshot = try #require(try source.snapshot(of: .taxi, OrderFixtures.id("m2")))
        let history = try #require(try OrderFixtures.history(source, .taxi, "m2"))
        let store = try make(factory)
        defer { store.shutdown() }
        let cases: [(OrderSnapshot, [OrderChangeRecord])] = [
            (snapshot, []),
            (snapshot, Array(history.prefix(2))),
            (snapshot, [history[0], history[2]]),
        ]
        for (snap, records) in cases {
            let error = OrderFixtures.storeError { () throws(StoreError) in
                try store.importOrder(snap, history: records)
            }
            #expect(error?.code == .invalidField)
        }
        var foreign = snapshot
        foreign.line = try #require(BusinessLine("bus"))
        let unknown = OrderFixtures.storeError { () throws(StoreError) in
            try store.importOrder(foreign, history: history)
        }
        #expect(unknown == .unknownLine("bus"))
        #expect(try store.orders(after: nil, limit: 10).isEmpty)
    }

    /// One batch with good and bad changes: each succeeds or fails on its own, in order.
    public static func batchMixed(_ factory: OrderStoreFactory) throws {
        let store = try make(factory)
        defer { store.shutdown() }
        let bus = try #require(BusinessLine("bus"))
        let results = store.applyBatch([
            OrderFixtures.change("x", BuiltInLines.created),
            OrderFixtures.change("x", BuiltInLines.inTrip),
            OrderFixtures.change("x", BuiltInLines.dispatching),
            OrderFixtures.change("y", BuiltInLines.created, line: bus),
            OrderFixtures.change("y", BuiltInLines.created, key: "ky"),
            OrderFixtures.change("y", BuiltInLines.created, key: "ky"),
            OrderFixtures.change("x", BuiltInLines.driverAssigned, fields: OrderFields(driverID: "d7")),
        ])
        #expect(results.count == 7)
        let offsets = results.map { try? $0.get().record.position.offset }
        #expect(offsets == [1, nil, 2, nil, 1, 1, 3])
        #expect((try? results[5].get().deduplicated) == true)
        if case .failure(let error) = results[1] { #expect(error.code == .illegalTransition) }
        if case .failure(let error) = results[3] { #expect(error == .unknownLine("bus")) }
        #expect(try store.snapshot(of: .taxi, OrderFixtures.id("x"))?.state == BuiltInLines.driverAssigned)
        #expect(try OrderFixtures.history(store, .taxi, "x")?.count == 3)
        #expect(try OrderFixtures.history(store, .taxi, "y")?.count == 1)
        #expect(store.applyBatch([]).isEmpty)
    }

    /// After `shutdown()`, calls throw `.closed`.
    public static func closedStore(_ factory: OrderStoreFactory) throws {
        let store = try make(factory)
        _ = try store.apply(OrderFixtures.change("z", BuiltInLines.created))
        store.shutdown()
        let apply = OrderFixtures.storeError { () throws(StoreError) in
            try store.apply(OrderFixtures.change("z", BuiltInLines.dispatching))
        }
        #expect(apply == .closed)
        let read = OrderFixtures.storeError { () throws(StoreError) in
            try store.snapshot(of: .taxi, OrderFixtures.id("z"))
        }
        #expect(read == .closed)
    }

    /// Durable stores only (skipped when the factory has no `reopen`).
    public static func durability(_ factory: OrderStoreFactory) throws {
        guard let reopen = factory.reopen else { return }
        let setup = OrderStoreSetup()
        let store = try make(factory, setup)
        var lifecycle = OrderFixtures.taxiLifecycle("d1")
        lifecycle[2].idempotencyKey = "assign-1"
        for change in lifecycle.prefix(4) { _ = try store.apply(change) }
        _ = try store.apply(OrderFixtures.change("d2", BuiltInLines.created, line: .express))
        let epoch = store.epoch
        let snapshot = try store.snapshot(of: .taxi, OrderFixtures.id("d1"))
        let history = try OrderFixtures.history(store, .taxi, "d1")
        store.shutdown()

        let reopened = try reopen(setup, store)
        defer { reopened.shutdown() }
        #expect(reopened.epoch == epoch)
        #expect(try reopened.snapshot(of: .taxi, OrderFixtures.id("d1")) == snapshot)
        #expect(try OrderFixtures.history(reopened, .taxi, "d1") == history)
        #expect(try reopened.orders(after: nil, limit: 10).count == 2)
        let replay = try reopened.apply(lifecycle[2])
        #expect(replay.deduplicated && replay.record.position.offset == 3)
        #expect(try reopened.apply(lifecycle[4]).record.position.offset == 5)
    }
}
