public import LonglinkCore

/// Comparing two stores order by order (and toggle by toggle), and walking a store's orders.
extension StoreMigration {
    /// Compares two stores order by order (snapshot and retained history, ignoring epochs) and, when `toggles` are
    /// given, toggle by toggle; returns the differences, the first `maxReported` of them named (which side
    /// holds what).
    /// - Parameter progress: called after each page of source orders (the source is counted first when given).
    public static func verify(
        source: any OrderStore,
        target: any OrderStore,
        toggles: Toggles? = nil,
        maxReported: Int = 20,
        pageSize: Int = 500,
        progress: ((Progress) -> Void)? = nil
    ) throws(MigrationError) -> Verification {
        let pageSize = max(1, pageSize)
        var result = Verification()
        var state = Progress(phase: .verify, visited: 0, total: progress == nil ? nil : try count(source, pageSize: pageSize))
        try walk(source, pageSize: pageSize) { (page) throws(MigrationError) in
            for snapshot in page {
                result.checked += 1
                state.visited += 1
                let subject = Difference.Subject.order(snapshot.line, snapshot.orderID)
                do throws(StoreError) {
                    let a = try source.retainedHistory(of: snapshot.line, snapshot.orderID)
                    let b = try target.retainedHistory(of: snapshot.line, snapshot.orderID)
                    if let difference = difference(of: subject, source: a, target: b) {
                        result.note(difference, maxReported: maxReported)
                    }
                } catch {
                    throw .store(error, order: "\(subject)")
                }
            }
            state.differences = result.differenceCount
            progress?(state)
        }
        try walk(target, pageSize: pageSize) { (page) throws(MigrationError) in
            for snapshot in page {
                let subject = Difference.Subject.order(snapshot.line, snapshot.orderID)
                do throws(StoreError) {
                    guard try source.snapshot(of: snapshot.line, snapshot.orderID) == nil else { continue }
                    result.checked += 1
                    let b = try target.retainedHistory(of: snapshot.line, snapshot.orderID)
                    if let difference = difference(of: subject, source: nil, target: b) {
                        result.note(difference, maxReported: maxReported)
                    }
                } catch {
                    throw .store(error, order: "\(subject)")
                }
            }
        }
        if let toggles {
            let differences = try toggleDifferences(source: toggles.source, target: toggles.target)
            result.togglesChecked = try toggleCount(source: toggles.source, target: toggles.target)
            for difference in differences { result.note(difference, maxReported: maxReported) }
        }
        return result
    }

    /// The target's orders a copy cannot bring up to date: ahead of the source's, diverged, or not in the source.
    static func orderConflicts(
        source: any OrderStore,
        target: any OrderStore,
        maxReported: Int,
        pageSize: Int,
        total: Int?,
        progress: ((Progress) -> Void)?
    ) throws(MigrationError) -> Verification {
        var result = Verification()
        var state = Progress(phase: .check, visited: 0, total: total)
        try walk(target, pageSize: pageSize) { (page) throws(MigrationError) in
            for snapshot in page {
                result.checked += 1
                state.visited += 1
                let subject = Difference.Subject.order(snapshot.line, snapshot.orderID)
                do throws(StoreError) {
                    let b = try target.retainedHistory(of: snapshot.line, snapshot.orderID)
                    let a = try source.retainedHistory(of: snapshot.line, snapshot.orderID)
                    if let difference = difference(of: subject, source: a, target: b), !difference.isResolvedByCopy {
                        result.note(difference, maxReported: maxReported)
                    }
                } catch {
                    throw .store(error, order: "\(subject)")
                }
            }
            state.differences = result.differenceCount
            progress?(state)
        }
        return result
    }

    static func count(_ store: any OrderStore, pageSize: Int) throws(MigrationError) -> Int {
        var total = 0
        try walk(store, pageSize: pageSize) { (page) throws(MigrationError) in total += page.count }
        return total
    }

    /// Calls `body` with each page of `store`'s orders.
    static func walk(
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
