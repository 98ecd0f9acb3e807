import Synchronization

/// Presence of one node, in memory: route → its members, behind one lock (taken per subscribe and
/// unsubscribe, never per message). With several nodes use `RedisPresence`, which keeps one of these for its own
/// node and shares it through Redis.
public final class LocalPresence: PresenceStore {
    /// A member as stored, 48 bytes: its client name and node id are indexes into tables of the names in use (an
    /// app's members share a handful of client names, a node's members its node id), and a route's members are a
    /// compact list, not a dictionary by connection id. Every subscription holds one, and idle memory per
    /// connection is a budget (issue 19): about 60 bytes per member instead of about 190.
    private struct Stored {
        var connectionID: String
        var userID: String
        var sinceMillis: UInt64
        var client: UInt32
        var node: UInt32
    }

    /// Strings stored once each with a count of their uses, by a 32-bit index; an index is reused once its string
    /// is no longer used, so names that come and go do not pile up.
    private struct Names {
        private var indexes: [String: UInt32] = [:]
        private var names: [String] = []
        private var uses: [Int] = []
        private var unused: [UInt32] = []

        subscript(index: UInt32) -> String { names[Int(index)] }

        mutating func retain(_ name: String) -> UInt32 {
            if let index = indexes[name] {
                uses[Int(index)] += 1
                return index
            }
            let index: UInt32
            if let reused = unused.popLast() {
                index = reused
                names[Int(index)] = name
                uses[Int(index)] = 1
            } else {
                index = UInt32(names.count)
                names.append(name)
                uses.append(1)
            }
            indexes[name] = index
            return index
        }

        mutating func release(_ index: UInt32) {
            uses[Int(index)] -= 1
            guard uses[Int(index)] == 0 else { return }
            indexes[names[Int(index)]] = nil
            names[Int(index)] = ""
            unused.append(index)
        }
    }

    /// One route's members: searched linearly while few (most routes have a handful), with positions by
    /// connection id past `indexedAbove`, so joining and leaving a broadcast route stay O(1).
    private struct Members {
        var list: [Stored] = []
        var positions: [String: Int]?

        static let indexedAbove = 16

        func position(of connectionID: String) -> Int? {
            if let positions { return positions[connectionID] }
            return list.firstIndex { $0.connectionID == connectionID }
        }

        /// Adds `stored`, or replaces the member of its connection and returns the one replaced.
        mutating func set(_ stored: Stored) -> Stored? {
            if let index = position(of: stored.connectionID) {
                let replaced = list[index]
                list[index] = stored
                return replaced
            }
            list.append(stored)
            if positions != nil {
                positions![stored.connectionID] = list.count - 1
            } else if list.count > Self.indexedAbove {
                var built: [String: Int] = [:]
                built.reserveCapacity(list.count)
                for (index, each) in list.enumerated() { built[each.connectionID] = index }
                positions = built
            }
            return nil
        }

        /// Removes by swapping with the last (the reply sorts members oldest first).
        mutating func remove(_ connectionID: String) -> Stored? {
            guard let index = position(of: connectionID) else { return nil }
            positions?[connectionID] = nil
            let last = list.removeLast()
            let removed: Stored
            if index < list.count {
                removed = list[index]
                list[index] = last
                positions?[last.connectionID] = index
            } else {
                removed = last
            }
            if list.count <= Self.indexedAbove / 2 { positions = nil }
            return removed
        }
    }

    private struct State {
        var routes: [Route: Members] = [:]
        var clientNames = Names()
        /// Node ids seen, indexed by `Stored.node` (one for a node's own members).
        var nodeIDs: [String] = []

        mutating func node(_ nodeID: String) -> UInt32 {
            if let index = nodeIDs.firstIndex(of: nodeID) { return UInt32(index) }
            nodeIDs.append(nodeID)
            return UInt32(nodeIDs.count - 1)
        }

        func member(_ stored: Stored) -> PresenceMember {
            PresenceMember(
                userID: stored.userID, clientName: clientNames[stored.client], connectionID: stored.connectionID,
                sinceMillis: stored.sinceMillis, nodeID: nodeIDs[Int(stored.node)]
            )
        }
    }

    private let state = Mutex(State())
    public let countsOnlyAbove: Int

    /// - Parameter countsOnlyAbove: routes with more subscribers report counts only (and send no join/leave events).
    public init(countsOnlyAbove: Int = 100) { self.countsOnlyAbove = countsOnlyAbove }

    public func joined(_ route: Route, _ member: PresenceMember) {
        state.withLock { state in
            let stored = Stored(
                connectionID: member.connectionID, userID: member.userID, sinceMillis: member.sinceMillis,
                client: state.clientNames.retain(member.clientName), node: state.node(member.nodeID)
            )
            if let replaced = state.routes[route, default: Members()].set(stored) {
                state.clientNames.release(replaced.client)
            }
        }
    }

    public func left(_ route: Route, connectionID: String) {
        state.withLock { state in
            guard let removed = state.routes[route]?.remove(connectionID) else { return }
            state.clientNames.release(removed.client)
            if state.routes[route]?.list.isEmpty == true { state.routes[route] = nil }
        }
    }

    public func localCount(of route: Route) -> Int { state.withLock { $0.routes[route]?.list.count ?? 0 } }

    /// This node's members of `route`.
    public func members(of route: Route) -> [PresenceMember] {
        state.withLock { state in (state.routes[route]?.list ?? []).map { state.member($0) } }
    }

    /// Every route with members on this node.
    public var routesWithMembers: [Route] { state.withLock { Array($0.routes.keys) } }

    public func presence(of route: Route, completion: @escaping @Sendable (Result<[PresenceMember], PresenceError>) -> Void) {
        completion(.success(members(of: route)))
    }

    public func shutdown() {
        state.withLock { state in
            state.routes.removeAll()
            state.clientNames = Names()
        }
    }
}
