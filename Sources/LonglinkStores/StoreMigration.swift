public import LonglinkCore

/// Copies everything a store holds (orders with their retained history, feature toggles) between any two
/// stores through the seams (`OrderStore`'s `orders(after:)`, `retainedHistory`, `importOrder`; `ToggleStore`'s
/// `toggles`, `importToggle`), and compares them. `longlink migrate --from <spec> --to <spec> [--verify] [--overwrite]` is:
///
/// ```swift
/// let report = try StoreMigration.copy(from: source, to: target, overwrite: overwrite) { print($0) }
/// if verify { let check = try StoreMigration.verify(source: source, target: target); exit(check.isClean ? 0 : 1) }
/// ```
///
/// Offsets and timestamps are copied; positions take the target's epoch, so clients holding positions from the
/// source reload snapshots after the switch. Copying is resumable: identical orders are skipped, and an order
/// whose target copy is an earlier state of the source's (the source moved on since the last run) is brought up
/// to date. Only a target holding something else (ahead of the source, diverged from it, or not in the source at
/// all) stops the copy, unless `overwrite`.
public enum StoreMigration {
    /// What a copy did with orders (or with toggles).
    public struct Counts: Hashable, Sendable {
        /// Written new to the target.
        public var created = 0
        /// Target copies that were an earlier state of the source's, brought up to date.
        public var extended = 0
        /// Target copies that differed otherwise, replaced (only with `overwrite`).
        public var replaced = 0
        /// Already identical in the target.
        public var identical = 0
        /// Held only by the target (left in place, only with `overwrite`).
        public var targetOnly = 0

        public init() {}

        /// Written to the target in any way.
        public var written: Int { created + extended + replaced }

        mutating func note(_ outcome: ImportOutcome) {
            switch outcome {
            case .created: created += 1
            case .extended: extended += 1
            case .replaced: replaced += 1
            case .identical: identical += 1
            }
        }
    }

    /// Where a copy or a verification stands, passed to the progress callback after each page of orders.
    public struct Progress: Hashable, Sendable, CustomStringConvertible {
        /// Which walk.
        public enum Phase: String, Hashable, Sendable {
            /// `copy`, first walk: the target's orders are checked against the source's (`visited` counts
            /// target orders, `differences` the ones that stop the copy).
            case check
            /// `copy`, second walk: the source's orders are written.
            case copy
            /// `verify`.
            case verify
        }

        /// Which walk.
        public var phase: Phase
        /// Orders visited so far (of the target when checking, of the source otherwise).
        public var visited: Int
        /// Orders in the store walked, when counted.
        public var total: Int?
        /// What the copy did so far (`copy` only).
        public var orders: Counts
        /// Differences found so far (`check` and `verify`).
        public var differences: Int

        public init(phase: Phase, visited: Int, total: Int?, orders: Counts = Counts(), differences: Int = 0) {
            self.phase = phase
            self.visited = visited
            self.total = total
            self.orders = orders
            self.differences = differences
        }

        public var description: String {
            let done = "\(phase.rawValue): \(visited)\(total.map { "/\($0)" } ?? "") orders"
            switch phase {
            case .copy:
                return done + ", \(orders.created) copied, \(orders.extended) extended, \(orders.replaced) replaced, "
                    + "\(orders.identical) already identical"
            case .check:
                return "check: \(visited)\(total.map { "/\($0)" } ?? "") target orders, \(differences) that stop the copy"
            case .verify:
                return done + ", \(differences) differences"
            }
        }
    }

    /// The result of a copy.
    public struct Report: Hashable, Sendable {
        /// What was done with orders.
        public var orders: Counts
        /// What was done with toggles; nil when they were not copied (no `toggles` given).
        public var toggles: Counts?
    }

    /// One order or toggle that differs between two stores.
    public struct Difference: Hashable, Sendable, CustomStringConvertible {
        /// What differs.
        public enum Subject: Hashable, Sendable, CustomStringConvertible {
            /// An order.
            case order(BusinessLine, OrderID)
            /// A feature toggle.
            case toggle(app: String, name: String)

            public var description: String {
                switch self {
                case .order(let line, let id): "\(line)/\(id)"
                case .toggle(let app, let name): "toggle \(app)/\(name)"
                }
            }
        }

        /// How it differs.
        public enum Kind: Hashable, Sendable {
            /// In the source only.
            case missingInTarget
            /// In the target only.
            case missingInSource
            /// The target holds an earlier state of the source's copy (a copy brings it up to date).
            case targetBehind
            /// The target's copy continues the source's (it moved on by itself).
            case targetAhead
            /// Neither continues the other.
            case diverged
        }

        /// What differs.
        public var subject: Subject
        /// How.
        public var kind: Kind
        /// Which side holds what (and, for diverged copies, the first difference).
        public var detail: String

        public init(_ subject: Subject, _ kind: Kind, detail: String) {
            self.subject = subject
            self.kind = kind
            self.detail = detail
        }

        /// The order's id, for an order.
        public var orderID: OrderID? {
            if case .order(_, let id) = subject { return id }
            return nil
        }

        public var description: String {
            switch kind {
            case .missingInTarget: "\(subject): missing in the target; \(detail)"
            case .missingInSource: "\(subject): only in the target; \(detail)"
            case .targetBehind: "\(subject): the target is behind: \(detail)"
            case .targetAhead: "\(subject): the target is ahead: \(detail)"
            case .diverged: "\(subject): the copies diverged: \(detail)"
            }
        }

        /// Whether a copy can resolve it without `overwrite` (the target lacks it or is behind).
        var isResolvedByCopy: Bool { kind == .missingInTarget || kind == .targetBehind }
    }

    /// The result of `verify`.
    public struct Verification: Hashable, Sendable {
        /// Orders compared (union of both stores).
        public var checked: Int = 0
        /// Toggles compared (union of both stores; 0 when toggles were not compared).
        public var togglesChecked: Int = 0
        /// How many orders and toggles differ.
        public var differenceCount: Int = 0
        /// Of those, how many are in the source only.
        public var missingInTarget: Int = 0
        /// Of those, how many are in the target only.
        public var missingInSource: Int = 0
        /// The first differences, up to the asked maximum.
        public var differences: [Difference] = []
        /// Whether the stores hold the same orders (and toggles).
        public var isClean: Bool { differenceCount == 0 }

        mutating func note(_ difference: Difference, maxReported: Int) {
            differenceCount += 1
            if difference.kind == .missingInTarget { missingInTarget += 1 }
            if difference.kind == .missingInSource { missingInSource += 1 }
            if differences.count < maxReported { differences.append(difference) }
        }
    }

    /// Why a migration stopped.
    public enum MigrationError: Error, Hashable, Sendable, CustomStringConvertible {
        /// The target holds orders or toggles a copy cannot bring up to date (ahead of the source, diverged, or
        /// not in the source); nothing was written.
        case targetNotEmpty(differing: Int, first: [Difference])
        /// A store call failed.
        case store(StoreError, order: String?)

        public var description: String {
            switch self {
            case .targetNotEmpty(let count, let first):
                "the target holds \(count) orders or toggles that differ from the source and cannot be brought up "
                    + "to date (first: " + first.map(\.description).joined(separator: "; ")
                    + "); pass overwrite to replace them"
            case .store(let error, let order): "\(order.map { "\($0): " } ?? "")\(error)"
            }
        }
    }

    /// Copies every order with its retained history, and every toggle (when `toggles` are given), from `source`
    /// to `target`.
    ///
    /// Before writing anything the target is checked: a target holding orders or toggles that are ahead of the
    /// source's, diverged from them, or absent from the source is refused with `.targetNotEmpty` unless
    /// `overwrite` is true (then those are replaced and target-only ones are left in place and counted). Target
    /// copies that are earlier states of the source's are brought up to date either way.
    /// - Parameters:
    ///   - pageSize: orders read per `orders(after:limit:)` call.
    ///   - countFirst: count the orders first so `Progress.total` is known.
    ///   - progress: called after each page (of the check, then of the copy).
    public static func copy(
        from source: any OrderStore,
        to target: any OrderStore,
        overwrite: Bool = false,
        toggles: Toggles? = nil,
        pageSize: Int = 500,
        countFirst: Bool = true,
        progress: ((Progress) -> Void)? = nil
    ) throws(MigrationError) -> Report {
        let pageSize = max(1, pageSize)
        var conflicts = try orderConflicts(
            source: source,
            target: target,
            maxReported: 5,
            pageSize: pageSize,
            total: countFirst && progress != nil ? try count(target, pageSize: pageSize) : nil,
            progress: progress
        )
        var toggleConflicts: [Difference] = []
        if let toggles {
            toggleConflicts = try toggleDifferences(source: toggles.source, target: toggles.target).filter { !$0.isResolvedByCopy }
        }
        for difference in toggleConflicts { conflicts.note(difference, maxReported: 5) }
        if !conflicts.isClean && !overwrite {
            throw .targetNotEmpty(differing: conflicts.differenceCount, first: conflicts.differences)
        }
        let policy: ImportPolicy = overwrite ? .replace : .extend
        var toggleCounts: Counts?
        if let toggles {
            var counts = try copyToggles(from: toggles.source, to: toggles.target, policy: policy)
            counts.targetOnly = toggleConflicts.filter { $0.kind == .missingInSource }.count
            toggleCounts = counts
        }
        var state = Progress(phase: .copy, visited: 0, total: countFirst ? try count(source, pageSize: pageSize) : nil)
        try walk(source, pageSize: pageSize) { (page) throws(MigrationError) in
            for snapshot in page {
                do throws(StoreError) {
                    state.visited += 1
                    guard let order = try source.retainedHistory(of: snapshot.line, snapshot.orderID) else { continue }
                    state.orders.note(try target.importOrder(order.snapshot, history: order.history, policy: policy))
                } catch {
                    throw .store(error, order: "\(snapshot.line)/\(snapshot.orderID)")
                }
            }
            progress?(state)
        }
        state.orders.targetOnly = conflicts.missingInSource - toggleConflicts.filter { $0.kind == .missingInSource }.count
        return Report(orders: state.orders, toggles: toggleCounts)
    }

    /// The difference between two copies of an order (nil: the same), described from the source's and the
    /// target's side.
    static func difference(
        of subject: Difference.Subject,
        source: (snapshot: OrderSnapshot, history: [OrderChangeRecord])?,
        target: (snapshot: OrderSnapshot, history: [OrderChangeRecord])?
    ) -> Difference? {
        let inSource = source.map { "source at \(ChangeValidation.describe($0.snapshot))" }
        let inTarget = target.map { "target at \(ChangeValidation.describe($0.snapshot))" }
        switch (source, target) {
        case (nil, nil): return nil
        case (.some, nil): return Difference(subject, .missingInTarget, detail: inSource ?? "")
        case (nil, .some): return Difference(subject, .missingInSource, detail: inTarget ?? "")
        case (.some(let source), .some(let target)):
            let lineage = ChangeValidation.lineage(of: target, comparedWith: source)
            var found = difference(of: subject, lineage, inSource: inSource ?? "", inTarget: inTarget ?? "")
            if lineage == .behind && source.snapshot.position.offset == target.snapshot.position.offset {
                found?.detail += "; the same history, retained from offset \(window(target.history)) in the target, "
                    + "\(window(source.history)) in the source"
            }
            return found
        }
    }

    /// The first retained offset of a history (`-` when empty).
    private static func window(_ history: [OrderChangeRecord]) -> String {
        history.first.map { String($0.position.offset) } ?? "-"
    }

    /// A `Difference` for a lineage of the target's copy against the source's (nil when identical).
    static func difference(
        of subject: Difference.Subject,
        _ lineage: ChangeValidation.Lineage,
        inSource: String,
        inTarget: String
    ) -> Difference? {
        switch lineage {
        case .identical: nil
        case .behind: Difference(subject, .targetBehind, detail: "\(inTarget), \(inSource)")
        case .ahead: Difference(subject, .targetAhead, detail: "\(inTarget), \(inSource)")
        case .diverged(let what): Difference(subject, .diverged, detail: "\(inSource), \(inTarget); \(what)")
        }
    }
}
