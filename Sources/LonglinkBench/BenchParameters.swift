import LonglinkRedis

/// Everything one `longlink bench` invocation asks for, parsed from its flags by `BenchCommand`.
public struct BenchParameters: Sendable, Hashable {
    /// How Longlink connections reach the gateway (`--transport`).
    public enum Transport: String, Sendable, Hashable, CaseIterable, Codable {
        /// Raw TCP (or TLS with `--tls`) only.
        case tcp
        /// Raw TCP first, then WebSocket (`wss` with `--tls`) on the same gateway, in the same run.
        case ws
    }

    /// The scenarios `longlink bench` runs.
    public enum Scenario: String, Sendable, Hashable, CaseIterable, Codable {
        case connect, fanout, orders, churn, storm, idle, store, codec, profile
        /// The backend HTTP API: `POST /api/v1/publish` over keep-alive connections.
        case httpPublish = "http-publish"
        /// One line-wide subscriber (`order://taxi/*`) at `--rate` changes per second.
        case line
    }

    /// The scenario.
    public var scenario: Scenario
    /// The gateway to use (`HOST:PORT`); nil = start one (a `longlink serve` child) for the run.
    public var server: String?
    /// fanout: the gateway the publisher connects to (`HOST:PORT`), when it is not `server` — another node
    /// sharing the same Redis store and broker, so every record crosses nodes. nil = the publisher uses `server`.
    public var publishServer: String?
    /// Subscribers (S).
    public var subscribers: Int
    /// Routes (T).
    public var routes: Int
    /// Changes to publish (M).
    public var messages: Int
    /// Publishes per second (R); 0 = as fast as acknowledged.
    public var rate: Double
    /// Payload bytes (P).
    public var payload: Int
    /// Connections (N) for connect, idle and churn.
    public var connections: Int
    /// Upper bound of the measured phase, in seconds.
    public var duration: Double
    /// Upper bound of any wait (connecting, subscribing, draining), in seconds.
    public var timeout: Double
    /// Load-generating processes (K); 1 = this process only.
    public var workers: Int
    /// This process's index when it is a worker (set by the parent).
    public var workerIndex: Int?
    /// Event-loop threads driving connections in each process.
    public var threads: Int
    /// Publishes in flight at most.
    public var window: Int
    /// How fan-out subscribers read (`--reader`); nil: io_uring where the kernel allows it for a fan-out as fast as
    /// acknowledged (`--rate 0`), else epoll.
    public var reader: BenchReader?
    /// With io_uring: completions a sleep in the ring waits for (`--reader-batch`; 1: the first), and with more than
    /// one, how long in seconds a completion that came waits for the others (`--reader-wait-us` in µs), which is
    /// then also the most a delivery is timed late.
    public var readerBatch = Int(BenchUringReader.defaultBatch)
    public var readerWait = Double(BenchUringReader.defaultMinWaitNanoseconds) / 1e9
    /// Connections opened or closed per second (churn), or reconnect spread (storm).
    public var churnRate: Double
    /// Rounds of Longlink-then-Redis when comparing.
    public var rounds: Int
    /// TLS connections (needs a TLS-capable gateway).
    public var tls: Bool
    /// `--transport ws`: a WebSocket run after the TCP run.
    public var transport: Transport = .tcp
    /// `--ws-server`: the gateway's WebSocket listener (`HOST:PORT`) with `--server` and `--transport ws`.
    public var webSocketServer: String?
    /// Print the report as JSON on stdout.
    public var json: Bool
    /// Write the time series as CSV here.
    public var csv: String?
    /// Write an SVG chart here.
    public var svg: String?
    /// Compare against Redis: `redis://HOST:PORT`, or `redis` to start a redis-server for the run.
    public var against: String?
    /// storm: restart the server instead of cutting the clients.
    public var restart: Bool
    /// `--tls`: trust only the CAs in this PEM file (default: the system store; bench's own gateway: its CA).
    public var caFile: String?
    /// `--tls`: no certificate verification at all (the CLI warns).
    public var insecure: Bool
    /// `--tls-max-version 1.2`: the bench clients offer TLS 1.2 at most, so their reconnects resume with
    /// abbreviated TLS 1.2 handshakes (no new key exchange) instead of TLS 1.3 psk_dhe_ke ones.
    public var tls12Only = false
    /// Local IPv4 addresses the Longlink connections bind to before connecting (`--source-addresses`): connection
    /// i uses address i mod N and falls over to the next on `EADDRNOTAVAIL`. Empty = the kernel's choice. Each
    /// source address has its own ephemeral port range per server address; Linux routes all of 127/8 to `lo`.
    public var sourceAddresses: [String]
    /// fanout: Redis or Redis Cluster URLs (`redis://…`, `redis-cluster://…`); for each, two `serve` nodes are
    /// started on it as store and broker, subscribers on one and the publisher on the other, and the rounds
    /// alternate between the URLs (cluster against single Redis, same run). Empty = the usual fan-out.
    public var crossNode: [String] = []
    /// store: a Redis or Redis Cluster store also measured behind the `StoreWriter`, without and with `WAIT 1`.
    public var storeURL: String?
    /// profile: the `longlink` binary whose gateway is measured (nil: the running executable).
    public var binary: String?
    /// profile: the two publish counts whose difference gives the per-delivery figure (nil: each workload's own,
    /// `ProfileWorkload.defaultCounts`).
    public var profileCounts: [Int]?
    /// profile: the workloads to measure.
    public var profileWorkloads: [ProfileWorkload.Kind]
    /// profile: where the callgrind files go (nil: a new directory under the temporary directory).
    public var profileDirectory: String?

    /// Creates parameters with the documented defaults.
    public init(
        scenario: Scenario,
        server: String? = nil,
        subscribers: Int = 1_000,
        routes: Int = 100,
        messages: Int = 10_000,
        rate: Double = 0,
        payload: Int = 64,
        connections: Int = 1_000,
        duration: Double = 10,
        timeout: Double = 30,
        workers: Int = 1,
        workerIndex: Int? = nil,
        threads: Int = 1,
        window: Int = 64,
        churnRate: Double = 200,
        rounds: Int = 1,
        tls: Bool = false,
        json: Bool = false,
        csv: String? = nil,
        svg: String? = nil,
        against: String? = nil,
        restart: Bool = false,
        publishServer: String? = nil,
        caFile: String? = nil,
        insecure: Bool = false,
        sourceAddresses: [String] = [],
        binary: String? = nil,
        profileCounts: [Int]? = nil,
        profileWorkloads: [ProfileWorkload.Kind] = ProfileWorkload.Kind.allCases,
        profileDirectory: String? = nil
    ) {
        self.scenario = scenario
        self.server = server
        self.subscribers = subscribers
        self.routes = routes
        self.messages = messages
        self.rate = rate
        self.payload = payload
        self.connections = connections
        self.duration = duration
        self.timeout = timeout
        self.workers = workers
        self.workerIndex = workerIndex
        self.threads = threads
        self.window = window
        self.churnRate = churnRate
        self.rounds = rounds
        self.tls = tls
        self.json = json
        self.csv = csv
        self.svg = svg
        self.against = against
        self.restart = restart
        self.publishServer = publishServer
        self.caFile = caFile
        self.insecure = insecure
        self.sourceAddresses = sourceAddresses
        self.binary = binary
        self.profileCounts = profileCounts
        self.profileWorkloads = profileWorkloads
        self.profileDirectory = profileDirectory
    }

    /// Parses `--source-addresses`: `N` (127.0.0.1 … 127.0.0.N, N ≤ 254), a range of the last octet
    /// `127.0.0.1-127.0.0.8`, or a comma-separated list of IPv4 addresses.
    public static func parseSourceAddresses(_ text: String) throws(BenchError) -> [String] {
        let usage = "--source-addresses expects N (127.0.0.1…127.0.0.N), A.B.C.D-A.B.C.E, or a comma-separated list; got '\(text)'"
        func octets(_ address: Substring) -> [Int]? {
            let parts = address.split(separator: ".", omittingEmptySubsequences: false).map { Int($0) }
            guard parts.count == 4, parts.allSatisfy({ $0.map { (0...255).contains($0) } ?? false }) else { return nil }
            return parts.map { $0! }
        }
        if let count = Int(text) {
            guard (1...254).contains(count) else { throw BenchError("--source-addresses N must be 1…254") }
            return (1...count).map { "127.0.0.\($0)" }
        }
        let dash = text.split(separator: "-")
        if dash.count == 2 {
            guard let first = octets(dash[0]), let last = octets(dash[1]), first.prefix(3) == last.prefix(3),
                first[3] >= 1, first[3] <= last[3], last[3] <= 254
            else { throw BenchError(usage) }
            let prefix = first.prefix(3).map(String.init).joined(separator: ".")
            return (first[3]...last[3]).map { "\(prefix).\($0)" }
        }
        let list = text.split(separator: ",").map { String($0.filter { !$0.isWhitespace }) }
        guard !list.isEmpty, list.count <= 254, list.allSatisfy({ octets(Substring($0)) != nil }) else { throw BenchError(usage) }
        return list
    }

    /// The fan-out workload these parameters describe.
    public var workload: FanoutWorkload {
        FanoutWorkload(
            subscribers: subscribers,
            routes: routes,
            messages: messages,
            rate: rate,
            payload: payload,
            window: window
        )
    }

    /// `duration` as a `Duration`.
    var durationLimit: Duration { .milliseconds(Int64(duration * 1000)) }
    /// `timeout` as a `Duration`.
    var timeoutLimit: Duration { .milliseconds(Int64(timeout * 1000)) }

    /// Checks bounds and combinations; throws a message for the user.
    public func validate() throws(BenchError) {
        guard subscribers >= 0, subscribers <= 1_000_000 else { throw BenchError("--subscribers must be 0…1,000,000") }
        guard routes >= 1 else { throw BenchError("--routes must be at least 1") }
        guard messages >= 0 else { throw BenchError("--messages must be 0 or more") }
        guard rate >= 0 else { throw BenchError("--rate must be 0 (as fast as acknowledged) or more") }
        guard payload >= BenchPayload.minimumSize, payload <= 16 * 1024 else {
            throw BenchError("--payload must be \(BenchPayload.minimumSize)…16384 bytes (it carries a timestamp and a sequence)")
        }
        guard connections >= 0 else { throw BenchError("--connections must be 0 or more") }
        guard duration > 0, timeout > 0 else { throw BenchError("--duration and --timeout must be positive") }
        guard workers >= 1, workers <= 64 else { throw BenchError("--workers must be 1…64") }
        if workers > 1 {
            guard scenario == .connect || scenario == .idle else {
                throw BenchError("--workers > 1 spreads connect and idle only; \(scenario.rawValue) runs in one process")
            }
            guard against == nil else { throw BenchError("--workers > 1 does not combine with --against") }
        }
        if let workerIndex, workerIndex < 0 || workerIndex >= 64 { throw BenchError("--worker-index must be 0…63") }
        guard threads >= 1, threads <= 64 else { throw BenchError("--threads must be 1…64") }
        guard window >= 1 else { throw BenchError("--window must be at least 1") }
        guard readerBatch >= 1, readerBatch <= 4096 else { throw BenchError("--reader-batch must be 1…4096") }
        guard readerWait >= 0.000_001, readerWait <= 0.1 else { throw BenchError("--reader-wait-us must be 1…100000") }
        guard rounds >= 1, rounds <= 20 else { throw BenchError("--rounds must be 1…20") }
        if publishServer != nil {
            guard scenario == .fanout else { throw BenchError("--publish-server applies to the fanout scenario only") }
            guard server != nil else {
                throw BenchError(
                    "--publish-server needs --server: the subscribers' node and the publisher's node must share one Redis "
                        + "(serve --store redis://… --broker redis://…), which a gateway started for the run does not"
                )
            }
        }
        if scenario == .profile {
            if let profileCounts, profileCounts.count != 2 || !profileCounts.allSatisfy({ $0 >= 1 }) || profileCounts[0] == profileCounts[1] {
                throw BenchError("--counts expects two different publish counts, e.g. 2000,7000")
            }
            guard subscribers >= 1 else { throw BenchError("bench profile needs at least one subscriber") }
            guard !profileWorkloads.isEmpty else { throw BenchError("--workloads expects many-routes, broadcast or both") }
            guard server == nil, against == nil, !tls, workers == 1, sourceAddresses.isEmpty else {
                throw BenchError(
                    "bench profile starts its own gateway and redis-server under callgrind (plain TCP, one load process): "
                        + "--server, --against, --tls, --workers and --source-addresses do not apply"
                )
            }
        }
        if tls && (scenario == .store || scenario == .codec) {
            throw BenchError("--tls applies to the network scenarios (connect, fanout, orders, churn, storm, idle)")
        }
        if restart {
            guard scenario == .storm else { throw BenchError("--restart applies to the storm scenario only") }
            guard server == nil else {
                throw BenchError(
                    "storm --restart needs the gateway bench starts itself (it kills and restarts it on a SQLite store); "
                        + "bench cannot restart a server it did not start: drop --server, or run storm without --restart"
                )
            }
        }
        if !sourceAddresses.isEmpty {
            guard scenario != .store && scenario != .codec else { throw BenchError("--source-addresses applies to the network scenarios") }
            guard sourceAddresses.count <= 254 else { throw BenchError("--source-addresses: at most 254 addresses") }
        }
        if !tls && (caFile != nil || insecure || tls12Only) { throw BenchError("--ca-file, --insecure and --tls-max-version need --tls") }
        if insecure && caFile != nil { throw BenchError("--insecure and --ca-file contradict each other; choose one") }
        if !crossNode.isEmpty {
            guard scenario == .fanout else { throw BenchError("--cross-node applies to the fanout scenario only") }
            guard transport == .tcp else { throw BenchError("--cross-node measures TCP subscribers: drop --transport ws") }
            guard server == nil, publishServer == nil, against == nil else {
                throw BenchError("--cross-node starts its own nodes: drop --server, --publish-server and --against")
            }
            for url in crossNode where RedisAddress(url: url) == nil && RedisClusterAddress(url: url) == nil {
                throw BenchError("--cross-node expects redis://HOST:PORT or redis-cluster://HOST:PORT[,…] URLs separated by ';', got '\(url)'")
            }
        }
        if let storeURL {
            guard scenario == .store else { throw BenchError("--store-url applies to the store scenario only") }
            guard RedisAddress(url: storeURL) != nil || RedisClusterAddress(url: storeURL) != nil else {
                throw BenchError("--store-url expects redis://HOST:PORT[/DB] or redis-cluster://HOST:PORT[,…], got '\(storeURL)'")
            }
        }
        if transport == .ws {
            guard [.fanout, .connect, .idle].contains(scenario) else {
                throw BenchError("--transport ws applies to fanout, connect and idle")
            }
            guard workers == 1 else { throw BenchError("--transport ws runs in one process (--workers 1)") }
            if server != nil && webSocketServer == nil {
                throw BenchError("--transport ws with --server needs --ws-server HOST:PORT (the gateway's --ws-listen or --wss-listen)")
            }
            guard publishServer == nil else { throw BenchError("--transport ws does not combine with --publish-server") }
        } else if webSocketServer != nil {
            throw BenchError("--ws-server needs --transport ws")
        }
        if let against, against != "redis", RedisAddress(url: against) == nil {
            throw BenchError("--against expects redis://HOST:PORT, or 'redis' to start a redis-server for the run")
        }
    }
}
