/// What a cluster node's error reply asks the client to do instead of answering:
///
/// - `-MOVED slot host:port`: the slot lives elsewhere now; update the slot map and send it there.
/// - `-ASK slot host:port`: the slot is being migrated and this key already moved; send `ASKING` and the command
///   to that node, once, without changing the map.
/// - `-TRYAGAIN …`: a multi-key command during a migration found its keys split between nodes; retry shortly.
/// - `-CLUSTERDOWN …`: the cluster (or this slot) has no serving master right now, e.g. during a failover;
///   refresh the map and retry later.
///
/// Other errors are answers, not redirections.
public enum RedisClusterRedirection: Hashable, Sendable {
    /// `MOVED`.
    case moved(slot: Int, to: RedisAddress)
    /// `ASK`.
    case ask(slot: Int, to: RedisAddress)
    /// `TRYAGAIN`.
    case tryAgain
    /// `CLUSTERDOWN`.
    case clusterDown

    /// Parses an error reply's message; `current` is the node that answered (a redirection naming no host, as
    /// `MOVED 3999 :6381`, means the same host). Nil when the error is not a redirection.
    public init?(error message: String, from current: RedisAddress) {
        if message.hasPrefix("TRYAGAIN") {
            self = .tryAgain
            return
        }
        if message.hasPrefix("CLUSTERDOWN") {
            self = .clusterDown
            return
        }
        let moved = message.hasPrefix("MOVED ")
        guard moved || message.hasPrefix("ASK ") else { return nil }
        let parts = message.split(separator: " ")
        guard parts.count >= 3, let slot = Int(parts[1]), (0..<RedisClusterSlot.count).contains(slot),
            let colon = parts[2].lastIndex(of: ":"), let port = Int(parts[2][parts[2].index(after: colon)...]),
            (1...65_535).contains(port)
        else { return nil }
        var host = String(parts[2][..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let address = RedisAddress(host: host.isEmpty ? current.host : host, port: port)
        self = moved ? .moved(slot: slot, to: address) : .ask(slot: slot, to: address)
    }

    /// Parses a reply: nil unless it is an error reply holding a redirection.
    public init?(_ reply: RedisReply, from current: RedisAddress) {
        guard case .error(let message) = reply else { return nil }
        self.init(error: message, from: current)
    }
}
