import LonglinkCore

/// A connection's subscriptions. The first is stored inline and the rest in a small array searched linearly:
/// most connections hold one route (a rider's order), where this costs no allocation at all, and a scan of a few
/// entries beats hashing. Memory per idle connection is what a gateway node scales on. Capped by
/// `PeerSettings.maxSubscriptions`.
struct SubscriptionTable<Value> {
    // `rest` comes first so the table ends with the inline entry's last field: what follows it in the peer
    // (small fields) packs into that entry's tail instead of starting at the next 8 bytes.
    private var rest: [(route: Route, value: Value)] = []
    private var first: (route: Route, value: Value)?

    var count: Int { (first == nil ? 0 : 1) + rest.count }
    var isEmpty: Bool { first == nil }
    var routes: [Route] { (first.map { [$0.route] } ?? []) + rest.map(\.route) }

    subscript(route: Route) -> Value? {
        get {
            if let first, first.route == route { return first.value }
            for entry in rest where entry.route == route { return entry.value }
            return nil
        }
        set {
            guard let newValue else {
                removeValue(forKey: route)
                return
            }
            if first == nil {
                first = (route, newValue)
            } else if first!.route == route {
                first!.value = newValue
            } else if let index = rest.firstIndex(where: { $0.route == route }) {
                rest[index].value = newValue
            } else {
                rest.append((route, newValue))
            }
        }
    }

    /// Stores `route` (an equal route, another copy of its text) as the key of its entry, so later lookups with
    /// that copy compare one pointer instead of the text. No effect when no entry has the route.
    mutating func adoptKey(_ route: Route) {
        if first != nil && first!.route == route {
            first!.route = route
        } else if let index = rest.firstIndex(where: { $0.route == route }) {
            rest[index].route = route
        }
    }

    /// Runs `body` on the value for `route` in place (one search, no copy out and back); nil when absent.
    mutating func update<R>(_ route: Route, _ body: (inout Value) -> R) -> R? {
        if first != nil && first!.route == route { return body(&first!.value) }
        guard let index = rest.firstIndex(where: { $0.route == route }) else { return nil }
        return body(&rest[index].value)
    }

    @discardableResult
    mutating func removeValue(forKey route: Route) -> Value? {
        if let current = first, current.route == route {
            first = rest.isEmpty ? nil : rest.removeFirst()
            if rest.isEmpty { rest = [] }
            return current.value
        }
        guard let index = rest.firstIndex(where: { $0.route == route }) else { return nil }
        let value = rest.remove(at: index).value
        if rest.isEmpty { rest = [] }
        return value
    }

    mutating func removeAll() {
        first = nil
        rest = []
    }
}
