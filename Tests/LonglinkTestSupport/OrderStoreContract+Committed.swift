import LonglinkCore
import Testing

/// The part of the contract a shadow store and a migration rely on: records another store committed are stored
/// exactly as committed (`applyCommittedBatch`), and imports follow their policy (`importOrder(policy:)`).
extension OrderStoreContract {
    /// A source store on its own clock, far from the store under test's, with one taxi order moved `steps` times.
    static func committedSource(_ order: String, steps: Int, key: String = "dispatch") throws
        -> (store: MemoryOrderStore, applied: [AppliedChange])
    {
        let clock = ManualWallClock(startMillis: 1_600_000_000_000)
        let source = MemoryOrderStore(epoch: 77, clock: clock)
        var lifecycle = OrderFixtures.taxiLifecycle(order)
        lifecycle[1].idempotencyKey = key
        var applied: [AppliedChange] = []
        for change in lifecycle.prefix(steps) {
            clock.advance(byMillis: 37)
            applied.append(try source.apply(change))
        }
        return (source, applied)
    }

    /// Every field of each record survives (offsets, timestamps, transitions, fields, keys), only the epoch is the
    /// store's; the snapshot is the source's; the store's own clock is not read; keys replay afterwards.
    public static func committedAsCommitted(_ factory: OrderStoreFactory) throws {
        let (source, applied) = try committedSource("c1", steps: 8)
        let setup = OrderStoreSetup()
        let store = try make(factory, setup)
        defer { store.shutdown() }
        for original in applied {
            setup.clock.advance(byMillis: 1_000)
            let stored = try store.applyCommitted(original.record)
            #expect(!stored.deduplicated)
            #expect(stored.record.position == StreamPosition(epoch: store.epoch, offset: original.record.position.offset))
            #expect(ChangeValidation.difference(stored.record, original.record) == nil)
            #expect(ChangeValidation.difference(stored.snapshot, original.snapshot) == nil)
            #expect(stored.snapshot.position.epoch == store.epoch)
        }
        let a = try #require(try source.retainedHistory(of: .taxi, OrderFixtures.id("c1")))
        let b = try #require(try store.retainedHistory(of: .taxi, OrderFixtures.id("c1")))
        #expect(ChangeValidation.firstDifference(a, b) == nil)
        #expect(b.history.allSatisfy { $0.position.epoch == store.epoch })
        let snapshot = try #require(try store.snapshot(of: .taxi, OrderFixtures.id("c1")))
        #expect(ChangeValidation.difference(snapshot, a.snapshot) == nil)
        var replay = OrderFixtures.taxiLifecycle("c1")[1]
        replay.idempotencyKey = "dispatch"
        let replayed = try store.apply(replay)
        #expect(replayed.deduplicated && replayed.record.position.offset == 2)
        #expect(replayed.record.timestampMillis == applied[1].record.timestampMillis)
    }

    /// A record the store already holds is a replay; a different record at a held offset, a gap, a move from
    /// another state, an illegal move and a first record that does not create the order are refused, changing
    /// nothing.
    public static func committedRefusals(_ factory: OrderStoreFactory) throws {
        let (_, applied) = try committedSource("c2", steps: 4)
        let store = try make(factory)
        defer { store.shutdown() }
        for original in applied.prefix(3) { _ = try store.applyCommitted(original.record) }
        let before = try #require(try store.retainedHistory(of: .taxi, OrderFixtures.id("c2")))

        let again = try store.applyCommitted(applied[1].record)
        #expect(again.deduplicated)
        #expect(ChangeValidation.difference(again.record, applied[1].record) == nil)
        #expect(again.snapshot.position.offset == 3)

        var different = applied[1].record
        different.timestampMillis += 1
        var gap = applied[3].record
        gap.position.offset = 5
        var otherState = applied[3].record
        otherState.fromState = BuiltInLines.created
        var illegal = applied[3].record
        illegal.toState = BuiltInLines.paid
        var notFirst = applied[0].record
        notFirst.orderID = OrderFixtures.id("c2-new")
        notFirst.position.offset = 2
        for (record, expected) in [
            (different, ErrorCode.staleChange), (gap, .staleChange), (otherState, .staleChange),
            (illegal, .illegalTransition), (notFirst, .staleChange),
        ] {
            let error = OrderFixtures.storeError { () throws(StoreError) in try store.applyCommitted(record) }
            #expect(error?.code == expected, "\(record.position.offset) \(record.toState): \(String(describing: error))")
        }
        let after = try #require(try store.retainedHistory(of: .taxi, OrderFixtures.id("c2")))
        #expect(ChangeValidation.firstDifference(before, after) == nil)
        #expect(try store.snapshot(of: .taxi, OrderFixtures.id("c2-new")) == nil)
    }

    /// A batch stores its records in order, each succeeding or failing on its own; history is trimmed to the
    /// retained count as `apply` trims it.
    public static func committedBatch(_ factory: OrderStoreFactory) throws {
        let (_, applied) = try committedSource("c3", steps: 8)
        let store = try make(factory, OrderStoreSetup(retention: StoreRetention(maxRecordsPerOrder: 3)))
        defer { store.shutdown() }
        var records = applied.map(\.record)
        var bad = records[2]
        bad.position.offset = 9
        records.insert(bad, at: 3)
        let results = store.applyCommittedBatch(records)
        #expect(results.count == 9)
        #expect(results.map { (try? $0.get()) != nil } == [true, true, true, false, true, true, true, true, true])
        #expect(try OrderFixtures.history(store, .taxi, "c3") == nil)  // trimmed: reads from zero are expired
        let kept = try #require(try store.retainedHistory(of: .taxi, OrderFixtures.id("c3")))
        #expect(kept.history.map(\.position.offset) == [6, 7, 8])
        #expect(kept.snapshot.state == BuiltInLines.paid)
    }

    /// `.extend` brings a stored earlier state up to date and refuses a stored copy that is ahead or diverged;
    /// `.refuseDifferent` refuses even an earlier state; `.replace` replaces anything; the outcome says which.
    public static func importPolicies(_ factory: OrderStoreFactory) throws {
        let (source, applied) = try committedSource("c4", steps: 5)
        let full = try #require(try source.retainedHistory(of: .taxi, OrderFixtures.id("c4")))
        let early = (snapshot: applied[2].snapshot, history: Array(full.history.prefix(3)))
        let store = try make(factory)
        defer { store.shutdown() }
        #expect(try store.importOrder(early.snapshot, history: early.history, policy: .extend) == .created)
        let refused = OrderFixtures.storeError { () throws(StoreError) in
            try store.importOrder(full.snapshot, history: full.history, policy: .refuseDifferent)
        }
        #expect(refused?.code == .staleChange)
        #expect(try store.importOrder(full.snapshot, history: full.history, policy: .extend) == .extended)
        #expect(try store.importOrder(full.snapshot, history: full.history, policy: .extend) == .identical)
        let copy = try #require(try store.retainedHistory(of: .taxi, OrderFixtures.id("c4")))
        #expect(ChangeValidation.firstDifference(copy, full) == nil)

        let ahead = OrderFixtures.storeError { () throws(StoreError) in
            try store.importOrder(early.snapshot, history: early.history, policy: .extend)
        }
        guard case .conflict(let why) = ahead else {
            Issue.record("expected a conflict, got \(String(describing: ahead))")
            return
        }
        #expect(why.contains("ahead") && why.contains("offset 5") && why.contains("offset 3"), "\(why)")
        var diverged = full
        diverged.history[4].timestampMillis += 1
        diverged.snapshot.updatedAtMillis += 1
        let conflict = OrderFixtures.storeError { () throws(StoreError) in
            try store.importOrder(diverged.snapshot, history: diverged.history, policy: .extend)
        }
        #expect(conflict?.code == .staleChange)
        #expect(try store.importOrder(diverged.snapshot, history: diverged.history, policy: .replace) == .replaced)
        #expect(try store.importOrder(early.snapshot, history: early.history, policy: .replace) == .replaced)
        #expect(try store.snapshot(of: .taxi, OrderFixtures.id("c4"))?.position.offset == 3)
    }
}
