import Glibc

/// A Redis Cluster client for one thread (the store's writer, `longlink migrate`, tests), on blocking
/// connections, one per node it talks to. hiredis 0.14 has no cluster support, so the cluster logic is here:
///
/// - **Discovery**: `CLUSTER SLOTS` from the first node that answers (known masters, then their replicas, then
///   the seeds), giving a `RedisClusterSlotMap`.
/// - **Routing**: each `Request` names its slot (`RedisClusterSlot.of(key)`) and goes to the master serving it.
/// - **Pipelining per node**: `execute` groups requests by node, *writes* every node's commands before it
///   *reads* any reply, then reads each node's replies in order, so the nodes work in parallel and a batch costs
///   one round trip to the slowest node rather than one per command or per node.
/// - **Redirections** (`RedisClusterRedirection`): `MOVED` updates the map and resends; `ASK` resends once to the
///   named node behind `ASKING`; `TRYAGAIN` and `CLUSTERDOWN` resend after a short pause. A redirected request was
///   not executed, so resending is always safe.
/// - **Failures**: a node that cannot be reached marks the map stale (it is read again, at most every 100 ms);
///   requests not yet sent are retried; requests whose replies were lost with a connection are retried only when
///   `replayable` (reads), because a write may have been applied. Everything is bounded by `retryBudget`, after
///   which a request fails with the last error (all of them retryable for the caller).
///
/// A request is a group of commands sent together to one node: either one keyed command followed by keyless ones
/// (`EVALSHA …` then `WAIT`), or a whole `MULTI … EXEC` block, all for keys of its one slot.
///
/// Not thread-safe: one thread at a time.
public final class RedisClusterClient {
    /// Commands for one slot, sent together to the node serving it.
    public struct Request: Sendable {
        /// The slot every key of the commands hashes to.
        public var slot: Int
        /// The commands (each a list of binary-safe arguments).
        public var commands: [[[UInt8]]]
        /// Whether the request may be sent again after its replies were lost with a connection (reads).
        public var replayable: Bool

        public init(slot: Int, commands: [[[UInt8]]], replayable: Bool) {
            self.slot = slot
            self.commands = commands
            self.replayable = replayable
        }
    }

    /// The seeds.
    public let address: RedisClusterAddress
    private let password: String?
    private let timeout: Duration
    private let retryBudget: Duration
    /// The slot map in use.
    public private(set) var slotMap = RedisClusterSlotMap()
    private var connections: [RedisAddress: RedisBlockingConnection] = [:]
    private var mapIsStale = true
    private var lastRefresh: ContinuousClock.Instant?
    /// Times the map was read with `CLUSTER SLOTS`.
    public private(set) var refreshCount = 0
    /// `MOVED` and `ASK` redirections followed.
    public private(set) var redirectionCount = 0

    /// Connects to the cluster and reads its slot map.
    /// - Parameters:
    ///   - timeout: bounds every connect and every command.
    ///   - retryBudget: how long `execute` keeps following redirections and waiting out an unserved slot.
    public init(_ address: RedisClusterAddress, password: String? = nil, timeout: Duration = .seconds(5), retryBudget: Duration = .seconds(1))
        throws(RedisError)
    {
        self.address = address
        self.password = password
        self.timeout = timeout
        self.retryBudget = retryBudget
        try refresh()
    }

    /// Reads the slot map again from the first node that answers.
    public func refresh() throws(RedisError) {
        var candidates: [RedisAddress] = slotMap.masters
        for shard in slotMap.shards { candidates += shard.replicas }
        for seed in address.seeds where !candidates.contains(seed) { candidates.append(seed) }
        var failure = RedisError.cluster("no seed given")
        lastRefresh = .now
        refreshCount += 1
        for node in candidates {
            do throws(RedisError) {
                let reply = try connection(to: node).command(["CLUSTER", "SLOTS"])
                let map = try RedisClusterSlotMap(slots: reply, queried: node)
                guard !map.masters.isEmpty else { throw RedisError.cluster("\(node) serves no slots (not part of a cluster yet)") }
                slotMap = map
                mapIsStale = false
                return
            } catch {
                if error.isConnectionFailure { drop(node) }
                failure = error
            }
        }
        throw failure
    }

    /// Runs one request.
    public func execute(_ request: Request) -> Result<[RedisReply], RedisError> { execute([request])[0] }

    /// Runs requests, pipelined per node; one result per request, in order: the request's replies (error
    /// replies in place), or why it could not be run.
    ///
    /// `trailer` is sent once per node after that node's requests (e.g. `WAIT 1 500`, which then covers all of
    /// them), and its replies are appended to the replies of each request that ran there.
    public func execute(_ requests: [Request], trailer: [[[UInt8]]] = []) -> [Result<[RedisReply], RedisError>] {
        var results = [Result<[RedisReply], RedisError>?](repeating: nil, count: requests.count)
        var work = requests.indices.map { Attempt(index: $0) }
        let deadline = ContinuousClock.now + retryBudget
        while !work.isEmpty {
            if mapIsStale, lastRefresh.map({ ContinuousClock.now - $0 >= .milliseconds(100) }) ?? true { try? refresh() }
            var round = Round()
            var plan: [(node: RedisAddress, attempts: [Attempt])] = []
            for attempt in work {
                guard let node = attempt.target ?? slotMap.master(forSlot: requests[attempt.index].slot) else {
                    round.later(attempt, .cluster("no master serves slot \(requests[attempt.index].slot)"))
                    continue
                }
                if let at = plan.firstIndex(where: { $0.node == node }) { plan[at].attempts.append(attempt) } else { plan.append((node, [attempt])) }
            }
            var sent: [(node: RedisAddress, connection: RedisBlockingConnection, attempts: [Attempt])] = []
            for (node, attempts) in plan {
                var commands: [[[UInt8]]] = []
                for attempt in attempts {
                    if attempt.asking { commands.append([Array("ASKING".utf8)]) }
                    commands += requests[attempt.index].commands
                }
                commands += trailer
                do {
                    let connection = try connection(to: node)
                    try connection.write(commands)
                    sent.append((node, connection, attempts))
                } catch {
                    drop(node)
                    for attempt in attempts {
                        // Nothing reached the node when the connect failed; after a failed write, a write may have.
                        if case .connect = error { round.later(attempt.reset, error) } else { round.lost(attempt, error, requests) }
                    }
                }
            }
            for (node, connection, attempts) in sent {
                var answered: [Int] = []
                var broken = false
                for (position, attempt) in attempts.enumerated() {
                    let count = requests[attempt.index].commands.count + (attempt.asking ? 1 : 0)
                    let replies: [RedisReply]
                    do {
                        replies = Array(try connection.read(count).dropFirst(attempt.asking ? 1 : 0))
                    } catch {
                        drop(node)
                        for lost in attempts[position...] { round.lost(lost, error, requests) }
                        broken = true
                        break
                    }
                    guard let redirection = replies.lazy.compactMap({ RedisClusterRedirection($0, from: node) }).first else {
                        results[attempt.index] = .success(replies)
                        answered.append(attempt.index)
                        continue
                    }
                    switch redirection {
                    case .moved(let slot, let master):
                        redirectionCount += 1
                        slotMap.assign(slot, to: master)
                        mapIsStale = true
                        round.again(Attempt(index: attempt.index, target: master))
                    case .ask(_, let target):
                        redirectionCount += 1
                        round.again(Attempt(index: attempt.index, target: target, asking: true))
                    case .tryAgain:
                        round.later(attempt, .cluster("\(node) answered TRYAGAIN (slot \(requests[attempt.index].slot) is migrating)"))
                    case .clusterDown:
                        mapIsStale = true
                        round.later(attempt.reset, .cluster("\(node) answered CLUSTERDOWN"))
                    }
                }
                guard !trailer.isEmpty else { continue }
                do throws(RedisError) {
                    // A request answered before the connection broke still lacks its trailer (its WAIT): lost too.
                    guard !broken else { throw RedisError.io("\(node) closed the connection") }
                    let tail = try connection.read(trailer.count)
                    for index in answered { results[index] = results[index]?.map { $0 + tail } }
                } catch {
                    drop(node)
                    for index in answered {
                        results[index] = nil
                        round.lost(Attempt(index: index), error, requests)
                    }
                }
            }
            for (index, error) in round.failed { results[index] = .failure(error) }
            work = round.retry
            guard !work.isEmpty else { break }
            guard ContinuousClock.now < deadline else {
                for attempt in work {
                    results[attempt.index] = .failure(round.errors[attempt.index] ?? .cluster("redirections did not settle within \(retryBudget)"))
                }
                break
            }
            if round.pause { Self.sleep(.milliseconds(20)) }
        }
        return results.map { $0 ?? .failure(.cluster("not run")) }
    }

    /// Runs `commands` on every master (e.g. `SCRIPT LOAD`); one result per master of the current map.
    public func onEveryMaster(_ commands: [[[UInt8]]]) -> [(master: RedisAddress, result: Result<[RedisReply], RedisError>)] {
        slotMap.masters.map { master in
            do throws(RedisError) {
                return (master, .success(try connection(to: master).pipeline(commands)))
            } catch {
                drop(master)
                return (master, .failure(error))
            }
        }
    }

    /// Closes every connection.
    public func close() { connections.removeAll() }

    // MARK: Internals

    /// One try of one request: where to (nil: the slot's master) and whether behind `ASKING`.
    private struct Attempt {
        var index: Int
        var target: RedisAddress? = nil
        var asking = false

        /// Back to routing by the slot map.
        var reset: Attempt { Attempt(index: index) }
    }

    /// What one round decided.
    private struct Round {
        var retry: [Attempt] = []
        var failed: [(Int, RedisError)] = []
        var errors: [Int: RedisError] = [:]
        var pause = false

        /// Resend at once (a redirection).
        mutating func again(_ attempt: Attempt) { retry.append(attempt) }

        /// Resend after a pause; `error` is reported if the budget runs out first.
        mutating func later(_ attempt: Attempt, _ error: RedisError) {
            retry.append(attempt)
            errors[attempt.index] = error
            pause = true
        }

        /// The connection broke after the request was (maybe) sent: resend reads, fail writes.
        mutating func lost(_ attempt: Attempt, _ error: RedisError, _ requests: [Request]) {
            if requests[attempt.index].replayable { later(attempt.reset, error) } else { failed.append((attempt.index, error)) }
        }
    }

    private func connection(to node: RedisAddress) throws(RedisError) -> RedisBlockingConnection {
        if let connection = connections[node], !connection.isBroken { return connection }
        let connection = try RedisBlockingConnection(node, password: password, timeout: timeout)
        connections[node] = connection
        return connection
    }

    private func drop(_ node: RedisAddress) {
        connections[node] = nil
        mapIsStale = true
    }

    private static func sleep(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }
}

extension RedisError {
    /// Whether the error means the connection is unusable (as opposed to an answer).
    var isConnectionFailure: Bool {
        switch self {
        case .connect, .io, .closed, .protocolViolation: true
        case .server, .unexpectedReply, .cluster: false
        }
    }
}

@available(*, unavailable)
extension RedisClusterClient: Sendable {}
