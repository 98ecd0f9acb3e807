import LonglinkCore

/// Where a `RedisOrderStore`'s commands go: one server on one blocking connection, or a Redis Cluster through a
/// `RedisClusterClient`. The store hands over groups of commands, each for the keys of one slot (the slot is 0
/// on one server), and gets back each group's replies (error replies in place) or a retryable failure. On one
/// server every group goes out in one pipeline; on a cluster the groups are pipelined per node.
///
/// Scripts are loaded on connect (`SCRIPT LOAD` on the server, or on every master of the cluster); `EVALSHA`
/// callers fall back to `EVAL` on `NOSCRIPT` (a restarted or newly promoted node).
final class RedisStoreLink {
    /// What the store talks to.
    enum Target: Hashable {
        case server(RedisAddress)
        case cluster(RedisClusterAddress)
    }

    /// Commands that run together on the node holding `slot`.
    struct Group {
        var slot: Int
        var commands: [[[UInt8]]]
        /// Whether it may be resent after its replies were lost (reads).
        var replayable: Bool
    }

    let target: Target
    private let password: String?
    private let timeout: Duration
    private var connection: RedisBlockingConnection?
    private var cluster: RedisClusterClient?
    /// SHA1 of each script, from `SCRIPT LOAD`.
    private(set) var scriptHashes: [String: String] = [:]

    init(_ target: Target, password: String?, timeout: Duration) {
        self.target = target
        self.password = password
        self.timeout = timeout
    }

    /// "Redis at …" or "Redis Cluster at …", for messages.
    var name: String {
        switch target {
        case .server(let address): "Redis at \(address)"
        case .cluster(let address): "Redis Cluster at \(address)"
        }
    }

    /// Connects (again) when not connected, loading the scripts.
    func connect() throws(StoreError) {
        switch target {
        case .server(let address):
            if let connection, !connection.isBroken { return }
            connection = nil
            do {
                let fresh = try RedisBlockingConnection(address, password: password, timeout: timeout)
                for script in RedisScripts.all { scriptHashes[script] = try fresh.command(["SCRIPT", "LOAD", script]).string }
                connection = fresh
            } catch {
                throw .storage("\(name) is unreachable: \(error)", retryable: true)
            }
        case .cluster(let address):
            if cluster != nil { return }
            do {
                let client = try RedisClusterClient(address, password: password, timeout: timeout)
                let loads = RedisScripts.all.map { [Array("SCRIPT".utf8), Array("LOAD".utf8), Array($0.utf8)] }
                for (_, result) in client.onEveryMaster(loads) {
                    guard case .success(let replies) = result else { continue }  // that master answers NOSCRIPT: EVAL
                    for (script, reply) in zip(RedisScripts.all, replies) { if let sha = reply.string { scriptHashes[script] = sha } }
                }
                cluster = client
            } catch {
                throw .storage("\(name) is unreachable: \(error)", retryable: true)
            }
        }
    }

    /// Runs groups (each with `trailer` after it on one server, after each node's groups on a cluster); one
    /// result per group: its replies followed by the trailer's.
    func run(_ groups: [Group], trailer: [[[UInt8]]] = []) -> [Result<[RedisReply], StoreError>] {
        guard !groups.isEmpty else { return [] }
        do {
            try connect()
        } catch {
            return groups.map { _ in .failure(error) }
        }
        if let cluster {
            let requests = groups.map { RedisClusterClient.Request(slot: $0.slot, commands: $0.commands, replayable: $0.replayable) }
            return cluster.execute(requests, trailer: trailer).map { result in
                result.mapError { .storage("\(name): \($0)", retryable: true) }
            }
        }
        guard let connection else { return groups.map { _ in .failure(.closed) } }
        do {
            let replies = try connection.pipeline(groups.flatMap(\.commands) + trailer)
            let tail = Array(replies.suffix(trailer.count))
            var results: [Result<[RedisReply], StoreError>] = []
            var at = 0
            for group in groups {
                results.append(.success(Array(replies[at..<(at + group.commands.count)]) + tail))
                at += group.commands.count
            }
            return results
        } catch {
            self.connection = nil
            return groups.map { _ in .failure(.storage("\(name) is unreachable: \(error)", retryable: true)) }
        }
    }

    /// Runs one group and returns its replies, throwing its failure.
    func run(_ group: Group, trailer: [[[UInt8]]] = []) throws(StoreError) -> [RedisReply] {
        try run([group], trailer: trailer)[0].get()
    }

    /// The `EVALSHA` command for a script.
    func evalCommand(_ script: String, keys: [[UInt8]], arguments: [[UInt8]]) -> [[UInt8]] {
        [Array("EVALSHA".utf8), Array((scriptHashes[script] ?? "").utf8), Array(String(keys.count).utf8)] + keys + arguments
    }

    /// The `EVAL` command (with the source) for a script, for `NOSCRIPT` answers.
    static func evalSourceCommand(_ script: String, keys: [[UInt8]], arguments: [[UInt8]]) -> [[UInt8]] {
        [Array("EVAL".utf8), Array(script.utf8), Array(String(keys.count).utf8)] + keys + arguments
    }

    /// Closes the connections.
    func close() {
        connection = nil
        cluster?.close()
        cluster = nil
    }
}

@available(*, unavailable)
extension RedisStoreLink: Sendable {}
