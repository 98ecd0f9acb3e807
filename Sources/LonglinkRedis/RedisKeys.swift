import LonglinkCore

/// The names of everything Longlink keeps in Redis, under one prefix (default `longlink`), so several
/// deployments (or tests) can share a server:
///
/// | key (one server) | key (cluster) | type | holds |
/// |---|---|---|---|
/// | `P:epoch` | `P:epoch:{S}` | string | the epoch, created with `SET NX` (a flushed Redis loses it: new epoch) |
/// | `P:o:LINE/ID` | `P:o:{LINE/ID}` | hash | the order's snapshot (`state`, `offset`, `created`, `updated`, fields) and `w`, its write token |
/// | `P:h:LINE/ID` | `P:h:{LINE/ID}` | stream | the order's retained records; entry id `OFFSET-0`, fields `from`, `to`, `ts`, `key`, ... |
/// | `P:k:LINE/ID` | `P:k:{LINE/ID}` | hash | idempotency key → offset of the record that carried it |
/// | `P:orders` | `P:orders:{S}` | sorted set | every order as `LINE\0ID` (score 0), walked with `ZRANGEBYLEX` by migration |
/// | `P:terminal` | `P:terminal:{S}` | sorted set | terminal orders scored by their last update, for the terminal TTL |
/// | `P:aging` | `P:aging:{S}` | sorted set | orders with a record other than the latest, scored by its timestamp, for the age limit |
/// | `P:toggles` | `P:toggles:{config}` | hash | feature toggles, `APP/NAME` → `EPOCH:OFFSET:UPDATED:KIND:TEXT` (`RedisToggleStore`) |
///
/// **On a Redis Cluster** every key of an order carries the hash tag `{LINE/ID}`, so its three keys share one
/// slot, and what is global on one server exists once per slot: `{S}` is `RedisClusterSlot.tag(for: slot)`, a short
/// text hashing to that slot. The apply script therefore touches only keys of the order's slot (the cluster runs
/// a script only when all its keys are in one slot) and stays atomic, indexes and epoch included. The per-slot
/// epoch is the part that matters for honesty: it lives and dies with the slot's data — it moves with the slot
/// in a migration, survives a failover exactly as the records do, and is gone when the shard holding the slot
/// lost its data, so that slot gets a new epoch and its clients `recovered = false`.
///
/// Route channels follow the same rule on a cluster: `P:r:{LINE/ID}` is in the order's slot, so the apply script
/// can `SPUBLISH` it and every node `SSUBSCRIBE`s it on the shard that owns it.
/// A line has one shard channel, `P:l:{LINE}` (one slot per line): the committing node `SPUBLISH`es each record
/// there too, after the commit, for the nodes with line-wide subscribers. Presence keys carry the route's tag:
/// `P:p:{LINE/ID}` (the hash of members per node, each field with its own deadline), `P:pw:{LINE/ID}` (someone
/// watches join/leave events) and the event channel `P:pe:{LINE/ID}`, all in one slot.
struct RedisKeys {
    let prefix: String
    /// Whether keys carry hash tags and per-slot indexes (Redis Cluster).
    let clustered: Bool
    /// The one-server index keys (unused on a cluster).
    private let globalEpoch: [UInt8]
    private let globalOrders: [UInt8]
    private let globalTerminal: [UInt8]
    private let globalAging: [UInt8]

    init(prefix: String, clustered: Bool = false) {
        self.prefix = prefix
        self.clustered = clustered
        globalEpoch = Array("\(prefix):epoch".utf8)
        globalOrders = Array("\(prefix):orders".utf8)
        globalTerminal = Array("\(prefix):terminal".utf8)
        globalAging = Array("\(prefix):aging".utf8)
    }

    /// How many index slots there are: 1 on one server, 16,384 on a cluster.
    var slotCount: Int { clustered ? RedisClusterSlot.count : 1 }

    /// The slot of an order's keys (0 on one server).
    func slot(_ line: BusinessLine, _ id: OrderID) -> Int {
        guard clustered else { return 0 }
        return RedisClusterSlot.of(Self.tag(line, id))
    }

    /// The slot of a route's channel (0 on one server).
    func slot(of route: Route) -> Int {
        guard clustered else { return 0 }
        return RedisClusterSlot.of(Self.tag(route))
    }

    /// The snapshot hash of an order.
    func order(_ line: BusinessLine, _ id: OrderID) -> [UInt8] { orderKey("o", line, id) }
    /// The history stream of an order.
    func history(_ line: BusinessLine, _ id: OrderID) -> [UInt8] { orderKey("h", line, id) }
    /// The idempotency-key hash of an order.
    func keys(_ line: BusinessLine, _ id: OrderID) -> [UInt8] { orderKey("k", line, id) }

    /// The epoch key of a slot.
    func epoch(_ slot: Int) -> [UInt8] { clustered ? slotKey("epoch", slot) : globalEpoch }
    /// The orders set of a slot.
    func orders(_ slot: Int) -> [UInt8] { clustered ? slotKey("orders", slot) : globalOrders }
    /// The terminal set of a slot.
    func terminal(_ slot: Int) -> [UInt8] { clustered ? slotKey("terminal", slot) : globalTerminal }
    /// The aging set of a slot.
    func aging(_ slot: Int) -> [UInt8] { clustered ? slotKey("aging", slot) : globalAging }

    /// The channel carrying a route's records: `scheme`'s on one server, `P:r:{TAG}` on a cluster.
    func channel(for route: Route, scheme: RedisChannelScheme) -> String {
        clustered ? Self.clusterChannel(for: route, prefix: prefix) : scheme.channel(for: route, prefix: prefix)
    }

    /// The shard channel of a route on a cluster: `PREFIX:r:{LINE/ID}` for an order, in the order's slot.
    static func clusterChannel(for route: Route, prefix: String) -> String { "\(prefix):r:{\(tag(route))}" }

    /// The shard channel of a line-wide route on a cluster: `PREFIX:l:{LINE}` for `order://LINE/*`
    /// (`PREFIX:l:{config://APP}` for another kind), one slot per line.
    static func lineChannel(for lineRoute: Route, prefix: String) -> String {
        "\(prefix):l:{\(tag(lineRoute).dropLast(2))}"
    }

    /// The hash tag of presence keys and event channels on a cluster: the route's own tag, so a route's hash, its
    /// watch key and its event channel share one slot.
    static func presenceKey(_ kind: String, _ route: Route, prefix: String) -> String { "\(prefix):\(kind):{\(tag(route))}" }

    /// An order's hash tag text: `LINE/ID`.
    static func tag(_ line: BusinessLine, _ id: OrderID) -> String { "\(line.name)/\(id.rawValue)" }

    /// A route's hash tag text: `LINE/ID` for an order route (the order's tag), the route's text otherwise.
    static func tag(_ route: Route) -> String {
        let text = route.text
        return text.hasPrefix("order://") ? String(text.dropFirst("order://".count)) : text
    }

    private func orderKey(_ kind: String, _ line: BusinessLine, _ id: OrderID) -> [UInt8] {
        clustered ? Array("\(prefix):\(kind):{\(line.name)/\(id.rawValue)}".utf8) : Array("\(prefix):\(kind):\(line.name)/\(id.rawValue)".utf8)
    }

    private func slotKey(_ kind: String, _ slot: Int) -> [UInt8] {
        Array("\(prefix):\(kind):{\(RedisClusterSlot.tag(for: slot))}".utf8)
    }

    /// The member naming an order in the sorted sets: `LINE\0ID`, so `ZRANGEBYLEX` sorts by line, then id.
    static func member(_ line: BusinessLine, _ id: OrderID) -> [UInt8] {
        Array(line.name.utf8) + [0] + Array(id.rawValue.utf8)
    }

    /// The line and id of a sorted-set member, nil when it is not one.
    static func order(fromMember member: [UInt8]) -> (BusinessLine, OrderID)? {
        guard let zero = member.firstIndex(of: 0),
            let line = BusinessLine(String(decoding: member[..<zero], as: UTF8.self)),
            let id = OrderID(String(decoding: member[(zero + 1)...], as: UTF8.self))
        else { return nil }
        return (line, id)
    }
}
