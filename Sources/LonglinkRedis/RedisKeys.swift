import LonglinkCore

/// The names of everything Longlink keeps in Redis, under one prefix (default `longlink`), so several
/// deployments (or tests) can share a server:
///
/// | key | type | holds |
/// |---|---|---|
/// | `P:epoch` | string | the store's epoch, created with `SET NX` (a flushed Redis loses it: new epoch) |
/// | `P:o:LINE/ID` | hash | the order's snapshot (`state`, `offset`, `created`, `updated`, fields) and `w`, its write token |
/// | `P:h:LINE/ID` | stream | the order's retained records; entry id `OFFSET-0`, fields `from`, `to`, `ts`, `key`, ... |
/// | `P:k:LINE/ID` | hash | idempotency key → offset of the record that carried it |
/// | `P:orders` | sorted set | every order as `LINE\0ID` (score 0), walked with `ZRANGEBYLEX` by migration |
/// | `P:terminal` | sorted set | terminal orders scored by their last update, for the terminal TTL |
/// | `P:aging` | sorted set | orders with a record other than the latest, scored by its timestamp, for the age limit |
///
/// Redis Cluster is not supported: the apply script touches the global sorted sets beside the order's keys.
/// Scaling Redis past one primary is done by running one Redis per group of business lines (see README).
struct RedisKeys {
    let prefix: String
    let epoch: [UInt8]
    let orders: [UInt8]
    let terminal: [UInt8]
    let aging: [UInt8]

    init(prefix: String) {
        self.prefix = prefix
        epoch = Array("\(prefix):epoch".utf8)
        orders = Array("\(prefix):orders".utf8)
        terminal = Array("\(prefix):terminal".utf8)
        aging = Array("\(prefix):aging".utf8)
    }

    /// The snapshot hash of an order.
    func order(_ line: BusinessLine, _ id: OrderID) -> [UInt8] { Array("\(prefix):o:\(line.name)/\(id.rawValue)".utf8) }
    /// The history stream of an order.
    func history(_ line: BusinessLine, _ id: OrderID) -> [UInt8] { Array("\(prefix):h:\(line.name)/\(id.rawValue)".utf8) }
    /// The idempotency-key hash of an order.
    func keys(_ line: BusinessLine, _ id: OrderID) -> [UInt8] { Array("\(prefix):k:\(line.name)/\(id.rawValue)".utf8) }

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
