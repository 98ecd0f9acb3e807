import Foundation
import Glibc
import Synchronization

/// A real Redis Cluster for tests, on loopback: `masters` masters with `replicasPerMaster` replicas each
/// (`cluster-enabled yes`, a small `cluster-node-timeout`, no persistence), created with
/// `redis-cli --cluster create … --cluster-replicas N --cluster-yes`.
///
/// Every node gets two free ports found at run time, its client port and its cluster bus port (`cluster-port`,
/// so the bus port need not be the client port + 10000), and a data directory under one temporary directory.
/// Nodes are stopped by PID on `stop()` and in `deinit`; a small watchdog process kills them by the PIDs in their
/// pid files should the test process die without stopping them.
///
/// `shared()` is one cluster for the whole test process, which tests use under their own key prefixes and never
/// disrupt; tests that kill nodes or move slots start their own.
public final class RedisCluster: Sendable {
    /// One node's ports (fixed for the cluster's life; a restarted node comes back on the same ones).
    public struct Node: Hashable, Sendable {
        /// The client port.
        public let port: Int
        /// The cluster bus port.
        public let busPort: Int
    }

    /// A master with its slot ranges and replicas, as `CLUSTER NODES` shows them.
    public struct Shard: Hashable, Sendable {
        /// The master's client port.
        public var master: Int
        /// The master's node id.
        public var masterID: String
        /// Slot ranges it serves.
        public var slots: [ClosedRange<Int>]
        /// Client ports of its replicas.
        public var replicas: [Int]
    }

    /// Every node, masters first as created.
    public let nodes: [Node]
    /// The temporary directory holding each node's data directory.
    public let directory: String
    /// `cluster-node-timeout` in milliseconds.
    public let nodeTimeoutMillis: Int
    private let replicasPerMaster: Int
    private let fullCoverage: Bool
    private let executable: String
    private let pids: Mutex<[Int: Int32]>
    private let watchdog: Int32
    private let stopped = Atomic<Bool>(false)

    /// Starts the nodes, creates the cluster and waits until it is healthy (every slot served, every replica in
    /// sync). Retries with new ports when a port was taken meanwhile.
    public init(
        masters: Int = 3,
        replicasPerMaster: Int = 1,
        nodeTimeoutMillis: Int = 1_000,
        fullCoverage: Bool = true,
        timeout: Duration = .seconds(60)
    ) throws {
        executable = try RedisServer.executable()
        self.nodeTimeoutMillis = nodeTimeoutMillis
        self.replicasPerMaster = replicasPerMaster
        self.fullCoverage = fullCoverage
        directory = NSTemporaryDirectory() + "longlink-cluster-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let count = masters * (1 + replicasPerMaster)
        var started: [Node] = []
        var running: [Int: Int32] = [:]
        var attempts = 0
        do {
            while started.count < count {
                attempts += 1
                guard attempts <= 5 else { throw RedisServerError("could not start \(count) cluster nodes on free ports") }
                let ports = try Self.freePorts(2 * (count - started.count))
                for index in stride(from: 0, to: ports.count, by: 2) {
                    let node = Node(port: ports[index], busPort: ports[index + 1])
                    if let pid = try? Self.launch(node, executable: executable, directory: directory, timeoutMillis: nodeTimeoutMillis, fullCoverage: fullCoverage) {
                        started.append(node)
                        running[node.port] = pid
                    }
                }
            }
        } catch {
            for pid in running.values { RedisServer.kill(pid) }
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
        nodes = started
        pids = Mutex(running)
        watchdog = (try? Self.spawnWatchdog(directory: directory)) ?? 0
        do {
            let create = try ProcessRunner.run(
                ["redis-cli", "--cluster", "create"] + started.map { "127.0.0.1:\($0.port)" }
                    + ["--cluster-replicas", String(replicasPerMaster), "--cluster-yes"],
                timeout: .seconds(60)
            )
            guard create.status == 0 else { throw RedisServerError("redis-cli --cluster create failed: \(create.text)") }
            try waitUntilHealthy(timeout: timeout)
        } catch {
            stop()
            throw error
        }
    }

    deinit { stop() }

    /// The process-wide cluster: started on first use (3 masters, 3 replicas), stopped when the test process
    /// exits. Tests share it under their own key prefixes and must not kill its nodes or move its slots.
    public static func shared() throws -> RedisCluster {
        try sharedCluster.withLock { state in
            if let cluster = state.cluster { return cluster }
            if let failure = state.failure { throw RedisServerError("the shared Redis Cluster did not start: \(failure)") }
            do {
                let cluster = try RedisCluster(nodeTimeoutMillis: 3_000)
                state.cluster = cluster
                atexit { sharedCluster.withLock { $0.cluster?.stop() } }
                return cluster
            } catch {
                state.failure = "\(error)"
                throw error
            }
        }
    }

    /// Client ports of every node.
    public var ports: [Int] { nodes.map(\.port) }

    /// `redis-cluster://127.0.0.1:P1,127.0.0.1:P2,…` naming every node as a seed.
    public var url: String { "redis-cluster://" + nodes.map { "127.0.0.1:\($0.port)" }.joined(separator: ",") }

    /// `redis-cluster://` naming only the first node (discovery must find the rest).
    public var singleSeedURL: String { "redis-cluster://127.0.0.1:\(nodes[0].port)" }

    /// A new blocking client to a node.
    public func client(_ port: Int) throws -> RESPTestClient { try RESPTestClient(port: port) }

    /// Whether the node on `port` is running (started and not killed).
    public func isRunning(_ port: Int) -> Bool { pids.withLock { $0[port] != nil } }

    /// The shards as a running node sees them (masters that serve slots, with their replicas).
    public func shards() throws -> [Shard] {
        let text = try anyRunningNode { try $0.text(["CLUSTER", "NODES"]) }
        return Self.parseShards(text)
    }

    /// The client port of the master serving `slot`.
    public func master(ofSlot slot: Int) throws -> Int {
        guard let shard = try shards().first(where: { $0.slots.contains { $0.contains(slot) } }) else {
            throw RedisServerError("no master serves slot \(slot)")
        }
        return shard.master
    }

    /// `CLUSTER KEYSLOT key` from a running node.
    public func keySlot(_ key: String) throws -> Int {
        let reply = try anyRunningNode { try $0.command(["CLUSTER", "KEYSLOT", key]) }
        guard let slot = reply.integer else { throw RedisServerError("CLUSTER KEYSLOT: \(reply)") }
        return Int(slot)
    }

    /// Kills a node with SIGKILL (no shutdown, no goodbye to the cluster) and reaps it.
    public func kill9(_ port: Int) {
        guard let pid = pids.withLock({ $0.removeValue(forKey: port) }) else { return }
        Glibc.kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        try? FileManager.default.removeItem(atPath: "\(directory)/\(port)/redis.pid")
    }

    /// Freezes a node (SIGSTOP): it neither answers nor replicates until `resume`, like a stalled machine.
    public func pause(_ port: Int) {
        if let pid = pids.withLock({ $0[port] }) { Glibc.kill(pid, SIGSTOP) }
    }

    /// Lets a paused node run again (SIGCONT).
    public func resume(_ port: Int) {
        if let pid = pids.withLock({ $0[port] }) { Glibc.kill(pid, SIGCONT) }
    }

    /// Starts a stopped node again on its ports with its cluster configuration (its data is gone: no persistence),
    /// and waits until it answers PING. It rejoins the cluster (a former master as a replica if it was failed over).
    public func restart(_ port: Int) throws {
        guard let node = nodes.first(where: { $0.port == port }) else { throw RedisServerError("no node on \(port)") }
        guard !isRunning(port) else { return }
        let pid = try Self.launch(node, executable: executable, directory: directory, timeoutMillis: nodeTimeoutMillis, fullCoverage: fullCoverage)
        pids.withLock { $0[port] = pid }
    }

    /// Waits until every running node says `cluster_state:ok`, every slot is served, no running node is flagged as
    /// failed, and every master has its replicas in sync (`master_link_status:up`).
    public func waitUntilHealthy(timeout: Duration = .seconds(60)) throws {
        let deadline = ContinuousClock.now + timeout
        var why = "not checked"
        while ContinuousClock.now < deadline {
            do {
                if let problem = try healthProblem() { why = problem } else { return }
            } catch {
                why = "\(error)"
            }
            usleep(100_000)
        }
        throw RedisServerError("the Redis Cluster in \(directory) did not become healthy: \(why)")
    }

    /// Runs `redis-cli` with `arguments` (e.g. `--cluster reshard …`), bounded by `timeout`.
    public func redisCLI(_ arguments: [String], timeout: Duration = .seconds(120)) throws -> ProcessRunner.Output {
        try ProcessRunner.run(["redis-cli"] + arguments, timeout: timeout)
    }

    /// Stops every node (SIGTERM, then SIGKILL) and the watchdog, and removes the directory. Idempotent.
    public func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let running = pids.withLock { pids in
            defer { pids.removeAll() }
            return Array(pids.values)
        }
        for pid in running {
            Glibc.kill(pid, SIGCONT)
            Glibc.kill(pid, SIGTERM)
        }
        for pid in running { RedisServer.kill(pid) }
        if watchdog > 0 { RedisServer.kill(watchdog) }
        try? FileManager.default.removeItem(atPath: directory)
    }

    // MARK: Health

    private func healthProblem() throws -> String? {
        let running = nodes.filter { isRunning($0.port) }
        var shards: [Shard] = []
        for node in running {
            let client = try self.client(node.port)
            let info = try client.text(["CLUSTER", "INFO"])
            guard info.contains("cluster_state:ok") else { return "\(node.port): cluster_state not ok" }
            let table = try client.text(["CLUSTER", "NODES"])
            for line in table.split(separator: "\n") {
                let fields = line.split(separator: " ")
                guard fields.count >= 8 else { continue }
                let port = Self.port(of: fields[1])
                let flags = fields[2]
                if running.contains(where: { $0.port == port }) && (flags.contains("fail") || fields[7] != "connected") {
                    return "\(node.port) sees \(port) as \(flags) \(fields[7])"
                }
                if flags.contains("noaddr") || flags.contains("handshake") { return "\(node.port) sees \(fields[1]) as \(flags)" }
            }
            if node == running.first { shards = Self.parseShards(table) }
        }
        let served = shards.reduce(0) { $0 + $1.slots.reduce(0) { $0 + $1.count } }
        guard served == 16_384 else { return "\(served) slots served" }
        for shard in shards {
            let synced = try shard.replicas.filter { port in
                guard isRunning(port) else { return false }
                return try client(port).text(["INFO", "replication"]).contains("master_link_status:up")
            }
            if synced.count < replicasPerMaster { return "master \(shard.master) has \(synced.count) replicas in sync" }
            // And the stream flows: a replica that finished its sync receives writes only after its first ACK
            // (up to a second later), so write to the shard and WAIT for the replicas.
            let master = try client(shard.master)
            guard let key = try (0..<1_000).lazy.map({ "longlink-health-\($0)" }).first(where: { key in
                guard let slot = try master.command(["CLUSTER", "KEYSLOT", key]).integer else { return false }
                return shard.slots.contains { $0.contains(Int(slot)) }
            }) else { return "no key for master \(shard.master)" }
            _ = try master.command(["SET", key, "1"])
            let acknowledged = try master.command(["WAIT", String(replicasPerMaster), "200"]).integer ?? 0
            if acknowledged < replicasPerMaster { return "master \(shard.master): \(acknowledged) replicas acknowledge writes" }
        }
        return nil
    }

    private func anyRunningNode<T>(_ body: (RESPTestClient) throws -> T) throws -> T {
        var last: any Error = RedisServerError("no node is running")
        for node in nodes where isRunning(node.port) {
            do {
                return try body(try client(node.port))
            } catch {
                last = error
            }
        }
        throw last
    }

    /// Masters serving slots, from `CLUSTER NODES` text.
    static func parseShards(_ text: String) -> [Shard] {
        var shards: [String: Shard] = [:]
        var replicas: [(master: String, port: Int)] = []
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 8, !fields[2].contains("fail") else { continue }
            let id = String(fields[0])
            let port = port(of: fields[1])
            if fields[2].contains("master") {
                let slots = fields.dropFirst(8).compactMap { field -> ClosedRange<Int>? in
                    guard !field.hasPrefix("[") else { return nil }  // a migrating/importing annotation
                    let bounds = field.split(separator: "-").compactMap { Int($0) }
                    guard let low = bounds.first else { return nil }
                    return low...(bounds.last ?? low)
                }
                guard !slots.isEmpty else { continue }
                shards[id] = Shard(master: port, masterID: id, slots: slots, replicas: [])
            } else if fields[2].contains("slave") {
                replicas.append((String(fields[3]), port))
            }
        }
        for replica in replicas { shards[replica.master]?.replicas.append(replica.port) }
        return shards.values.sorted { $0.slots[0].lowerBound < $1.slots[0].lowerBound }
    }

    /// The client port in `ip:port@cport[,hostname]`.
    private static func port(of address: Substring) -> Int {
        let hostPort = address.split(separator: "@").first ?? address
        return Int(hostPort.split(separator: ":").last ?? "") ?? 0
    }

    // MARK: Processes

    /// Starts one node and waits until it answers PING; throws when it exits (its port was taken) or stays silent.
    private static func launch(_ node: Node, executable: String, directory: String, timeoutMillis: Int, fullCoverage: Bool) throws -> Int32 {
        let data = "\(directory)/\(node.port)"
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        let pid = try RedisServer.spawn(executable, [
            "--port", String(node.port), "--cluster-port", String(node.busPort), "--bind", "127.0.0.1",
            "--cluster-enabled", "yes", "--cluster-config-file", "\(data)/nodes.conf",
            "--cluster-node-timeout", String(timeoutMillis), "--cluster-replica-validity-factor", "0",
            "--cluster-allow-replica-migration", "no", "--cluster-require-full-coverage", fullCoverage ? "yes" : "no",
            "--dir", data, "--save", "", "--appendonly", "no", "--protected-mode", "no",
            "--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0", "--repl-diskless-load", "swapdb",
            "--loglevel", "notice", "--logfile", "\(data)/redis.log", "--pidfile", "\(data)/redis.pid",
        ])
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if RedisServer.ping(port: node.port) { return pid }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid { throw RedisServerError("redis-server on \(node.port) exited (\(status))") }
            usleep(20_000)
        }
        RedisServer.kill(pid)
        throw RedisServerError("redis-server on \(node.port) did not answer PING")
    }

    /// A shell that waits for this test process to end, then SIGKILLs every node still named in a pid file.
    private static func spawnWatchdog(directory: String) throws -> Int32 {
        let script = """
            while kill -0 \(getpid()) 2>/dev/null; do sleep 1; done
            for f in '\(directory)'/*/redis.pid; do [ -f "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null; done
            rm -rf '\(directory)'
            """
        return try RedisServer.spawn("/bin/sh", ["-c", script])
    }

    /// `count` distinct free loopback ports: all bound at once (so the kernel hands out different ones), then released.
    private static func freePorts(_ count: Int) throws -> [Int] {
        var sockets: [Int32] = []
        defer { sockets.forEach { close($0) } }
        var ports: [Int] = []
        for _ in 0..<count {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw RedisServerError("socket: \(String(cString: strerror(errno)))") }
            sockets.append(fd)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = 0
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else { throw RedisServerError("bind: \(String(cString: strerror(errno)))") }
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
            ports.append(Int(UInt16(bigEndian: address.sin_port)))
        }
        return ports
    }
}

/// The process-wide cluster behind `RedisCluster.shared()`.
private let sharedCluster = Mutex<(cluster: RedisCluster?, failure: String?)>((nil, nil))
