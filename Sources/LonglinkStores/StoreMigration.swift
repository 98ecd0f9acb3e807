public import LonglinkCore

/// Copies orders between any two `OrderStore`s through the protocol (`orders(after:)`, `retainedHistory`,
/// `importOrder`), and compares them. `longlink migrate --from <spec> --to <spec> [--verify] [--overwrite]` is:
///
/// ```swift
/// let report = try StoreMigration.copy(from: source, to: target, overwrite: overwrite) { print($0) }
/// if verify { let check = try StoreMigration.verify(source: source, target: target); exit(check.isClean ? 0 : 1) }
/// ```
///
/// Run it with both stores quiescent (the gateway stopped). Offsets and timestamps are copied; positions take
/// the target's epoch, so clients holding positions from the source reload snapshots after the switch.
/// Copying is safe to run twice: identical orders are skipped, so an interrupted copy resumes where it stopped.
public enum StoreMigration {
    /// Where a copy stands, passed to the progress callback after each page.
    public struct Progress: Hashable, Sendable, CustomStringConvertible {
        /// Orders written to the target (new or replaced).
        public var copied: Int
        /// Orders already identical in the target.
        public var skipped: Int
        /// Orders visited so far.
        public var visited: Int
        /// Orders in the source, when counted.
        public var total: Int?

        public init(copied: Int, skipped: Int, visited: Int, total: Int?) {
            self.copied = copied
            self.skipped = skipped
            self.visited = visited
            self.total = total
        }

        public var description: String {
            "\(visited)\(total.map { "/\($0)" } ?? "") orders: \(copied) copied, \(skipped) already identical"
        }
    }

    /// The result of a copy.
    public struct Report: Hashable, Sendable {
        /// Orders written to the target.
        public var copied: Int
        /// Orders already identical in the target.
        public var skipped: Int
        /// Of `copied`, orders that replaced different data (only with `overwrite`).
        public var replaced: Int
        /// Orders found only in the target (left in place).
        public var targetOnly: Int
    }

    /// One order that differs between two stores.
    public struct Difference: Hashable, Sendable, CustomStringConvertible {
        /// How it differs.
        public enum Kind: Hashable, Sendable {
            /// The order is in the source only.
            case missingInTarget
            /// The order is in the target only.
            case missingInSource
            /// Both hold it, with different data (the first difference described).
            case differs(String)
        }

        /// The order's line.
        public var line: BusinessLine
        /// The order.
        public var orderID: OrderID
        /// How it differs.
        public var kind: Kind

        public var description: String {
            switch kind {
            case .missingInTarget: "\(line)/\(orderID): missing in target"
            case .missingInSource: "\(line)/\(orderID): only in target"
            case .differs(let what): "\(line)/\(orderID): \(what)"
            }
        }
    }

    /// The result of `verify`.
    public struct Verification: Hashable, Sendable {
        /// Orders compared (union of both stores).
        public var checked: Int
        /// How many differ.
        public var differenceCount: Int
        /// Of those, how many are in the source only.
        public var missingInTarget: Int
        /// Of those, how many are in the target only.
        public var missingInSource: Int
        /// The first differences, up to the asked maximum.
        public var differences: [Difference]
        /// Whether the stores hold the same orders.
        public var isClean: Bool { differenceCount == 0 }
    }

    /// Why a migration stopped.
    public enum MigrationError: Error, Hashable, Sendable, CustomStringConvertible {
        /// The target holds orders that differ from the source (or that the source lacks); nothing was written.
        case targetNotEmpty(differing: Int, first: [Difference])
        /// A store call failed.
        case store(StoreError, order: String?)

        public var description: String {
            switch self {
            case .targetNotEmpty(let count, let first):
                "MigrationError: the target holds \(count) orders that differ from the source (first: "
                    + first.map(\.description).joined(separator: "; ")
                    + "); pass overwrite to replace them"
            case .store(let error, let order): "MigrationError: \(order.map { "\($0): " } ?? "")\(error)"
            }
        }
    }

    /// Copies every order with its retained history from `source` to `target`.
    ///
    /// Before writing anything the target is checked: if it holds orders that differ from the source's (or that
    /// the source does not have), the copy is refused with `.targetNotEmpty` unless `overwrite` is true; then
    /// differing orders are replaced and target-only orders are left in place (and counted).
    /// - Parameters:
    ///   - pageSize: orders read per `orders(after:limit:)` call.
    ///   - countFirst: walk the source once first so `Progress.total` is known.
    ///   - progress: called after each page.
    public static func copy(
        from source: any OrderStore,
        to target: any OrderStore,
        overwrite: Bool = false,
        pageSize: Int = 500,
        countFirst: Bool = true,
        progress: ((Progress) -> Void)? = nil
    ) throws(MigrationError) -> Report {
        let pageSize = max(1, pageSize)
        let conflicts = try verify(
            source: target,
            target: source,
            maxReported: 5,
            pageSize: pageSize,
            targetKeysOnly: true
        )
        if !conflicts.isClean && !overwrite {
            throw .targetNotEmpty(differing: conflicts.differenceCount, first: conflicts.differences.map(\.flipped))
        }
        let total = countFirst ? try count(source, pageSize: pageSize) : nil
        var state = Progress(copied: 0, skipped: 0, visited: 0, total: total)
        var replaced = 0
        try walk(source, pageSize: pageSize) { (page) throws(MigrationError) in
            for snapshot in page {
                let name = "\(snapshot.line)/\(snapshot.orderID)"
                do throws(StoreError) {
                    state.visited += 1
                    guard let order = try source.retainedHistory(of: snapshot.line, snapshot.orderID) else { continue }
                    if let existing = try target.retainedHistory(of: snapshot.line, snapshot.orderID) {
                        if ChangeValidation.isSameOrder(existing, order) {
                            state.skipped += 1
                            continue
                        }
                        replaced += 1
                    }
                    try target.importOrder(order.snapshot, history: order.history, replace: overwrite)
                    state.copied += 1
                } catch {
                    throw .store(error, order: name)
                }
            }
            progress?(state)
        }
        // The check ran with the stores swapped: its "missing in target" orders are the target's own.
        return Report(
            copied: state.copied,
            skipped: state.skipped,
            replaced: replaced,
            targetOnly: conflicts.missingInTarget
        )
    }

    /// Compares two stores order by order (snapshot and retained history, ignoring epochs) and returns the
    /// differences, the first `maxReported` of them named.
    public static func verify(
        source: any OrderStore,
        target: any OrderStore,
        maxReported: Int = 20,
        pageSize: Int = 500
    ) throws(MigrationError) -> Verification {
        try verify(
            source: source,
            target: target,
            maxReported: maxReported,
            pageSize: max(1, pageSize),
            targetKeysOnly: false
        )
    }

    /// With `targetKeysOnly`, orders only in `target` are not reported (used to check a target before copying,
    /// with the stores swapped: then only orders of the real target are looked at).
    private static func verify(
        source: any OrderStore,
        target: any OrderStore,
        maxReported: Int,
        pageSize: Int,
        targetKeysOnly: Bool
    ) throws(MigrationError) -> Verification {
        var result = Verification(
            checked: 0,
            differenceCount: 0,
            missingInTarget: 0,
            missingInSource: 0,
            differences: []
        )
        func note(_ difference: Difference) {
            result.differenceCount += 1
            if difference.kind == .missingInTarget { result.missingInTarget += 1 }
            if difference.kind == .missingInSource { result.missingInSource += 1 }
            if result.differences.count < maxReported { result.differences.append(difference) }
        }
        try walk(source, pageSize: pageSize) { (page) throws(MigrationError) in
            for snapshot in page {
                result.checked += 1
                do throws(StoreError) {
                    guard let a = try source.retainedHistory(of: snapshot.line, snapshot.orderID) else { continue }
                    guard let b = try target.retainedHistory(of: snapshot.line, snapshot.orderID) else {
                        note(Difference(line: snapshot.line, orderID: snapshot.orderID, kind: .missingInTarget))
                        continue
                    }
                    if let what = ChangeValidation.firstDifference(a, b) {
                        note(Difference(line: snapshot.line, orderID: snapshot.orderID, kind: .differs(what)))
                    }
                } catch {
                    throw .store(error, order: "\(snapshot.line)/\(snapshot.orderID)")
                }
            }
        }
        if targetKeysOnly { return result }
        try walk(target, pageSize: pageSize) { (page) throws(MigrationError) in
            for snapshot in page {
                let inSource: OrderSnapshot?
                do throws(StoreError) {
                    inSource = try source.snapshot(of: snapshot.line, snapshot.orderID)
                } catch {
                    throw .store(error, order: "\(snapshot.line)/\(snapshot.orderID)")
                }
                if inSource == nil {
                    result.checked += 1
                    note(Difference(line: snapshot.line, orderID: snapshot.orderID, kind: .missingInSource))
                }
            }
        }
        return result
    }

    private static func count(_ store: any OrderStore, pageSize: Int) throws(MigrationError) -> Int {
        var total = 0
        try walk(store, pageSize: pageSize) { (page) throws(MigrationError) in total += page.count }
        return total
    }

    /// Calls `body` with each page of `store`'s orders.
    private static func walk(
        _ store: any OrderStore,
        pageSize: Int,
        _ body: ([OrderSnapshot]) throws(MigrationError) -> Void
    ) throws(MigrationError) {
        var cursor: OrderCursor?
        while true {
            let page: [OrderSnapshot]
            do throws(StoreError) {
                page = try store.orders(after: cursor, limit: pageSize)
            } catch {
                throw .store(error, order: nil)
            }
            guard let last = page.last else { return }
            try body(page)
            cursor = OrderCursor(line: last.line, orderID: last.orderID)
        }
    }
}

extension StoreMigration.Difference {
    /// The same difference seen from the other side (source and target swapped).
    var flipped: StoreMigration.Difference {
        switch kind {
        case .missingInTarget: StoreMigration.Difference(line: line, orderID: orderID, kind: .missingInSource)
        case .missingInSource: StoreMigration.Difference(line: line, orderID: orderID, kind: .missingInTarget)
        case .differs: self
        }
    }
}
