import Foundation
import Glibc
import LonglinkLoop
import LonglinkProtobuf
import LonglinkWebSocket
public import LonglinkStores
public import LonglinkGateway
public import LonglinkCore

/// `longlink serve`: the gateway. This is the composition root: it reads the feature toggles (store, shadow
/// store, later broker and transport), builds the concrete implementations and wires them behind the seams.
public enum ServeCommand {
    /// The command.
    public static let command = Command(
        name: "serve",
        summary: "run the gateway",
        details: """
            Starts one event loop per core, each with its own SO_REUSEPORT listener, the Store's single writer on
            its own thread, and the local broker. A port another process listens on is refused ("address already
            in use"). SIGTERM or SIGINT drain: stop accepting, send every client a `shutdown` disconnect with a
            jittered reconnect delay paced over --drain-period, flush, close the store, exit 0; before it serves
            (waiting for Redis), they end it at once, also with exit 0.
            """,
        maximumPositionals: 0,
        options: ServeOptions.specs
    ) { options, context in
        let configuration = try ServeConfiguration(options: options)
        let reloader = ConfigReloader(options: options, environment: context.environment)
        return try runServer(configuration, context: context, reloader: reloader)
    }

    /// Builds everything, serves until SIGTERM/SIGINT, drains and returns the exit code.
    static func runServer(
        _ configuration: ServeConfiguration,
        context: CommandContext,
        reloader: ConfigReloader? = nil
    ) throws -> Int32 {
        let levelSwitch = LogLevelSwitch(configuration.logLevel)
        let format: StderrLogSink.Format? = configuration.logJSON.map { $0 ? .json : .text }
        let logger = Logger(
            label: "longlink",
            level: configuration.logLevel,
            sink: StderrLogSink(format: format),
            levelSwitch: levelSwitch
        )
        // Until the signalfd below watches them, SIGTERM and SIGINT end a start that waits (for Redis, say).
        let startup = StartupSignalWatch(logger: logger)
        let security: ServeSecurityConfiguration.Prepared
        let running: RunningGateway
        do {
            security = try configuration.security.prepare(environment: context.environment, io: context.io)
            running = try RunningGateway.start(configuration, security: security, environment: context.environment, logger: logger)
        } catch {
            startup.finish()
            throw error
        }
        startup.finish()
        context.io.err(ServeBanner.text(configuration, running: running, security: security))
        if let admin = running.admin, let listen = configuration.metricsListen {
            context.io.err("operations: http://\(listen.host):\(admin.port)/ (metrics, healthz, readyz, admin page and API)")
            if let ws = ServeBanner.webSocketURLs(configuration, running: running).ws {
                context.io.err("example page: http://\(listen.host):\(admin.port)/example#server=\(ws)&order=taxi/8812&token=TOKEN")
            }
        }
        if let api = running.api, let listen = configuration.api.listen {
            context.io.err("backend API: http://\(listen.host):\(api.port)/api/v1/ (publish, publish/batch, orders)")
        }
        if security.tokenHint == nil {
            logger.warning("running with --insecure-dev: no authentication, every client is admin")
        }
        let control = try EventLoop(id: 1_000)
        var signals: SignalSource?
        try control.run { loop in
            do {
                signals = try SignalSource(signals: UnixSignal.lifecycle, on: loop) { signal in
                    if signal == .hangup {
                        ServeBanner.reload(security.tls, logger: logger)
                        logger.notice(reloader?.reload(into: levelSwitch) ?? "SIGHUP: nothing else to reload")
                        return
                    }
                    logger.notice("\(signal): draining over \(configuration.drainPeriod)")
                    running.drainAndStop()
                    signals?.close()
                    loop.stop()
                }
            } catch {
                logger.error("cannot watch signals: \(error)")
                loop.stop()
            }
        }
        logger.notice("stopped")
        return 0
    }
}

/// A started gateway with everything it owns, in the order they must stop: the composition `serve` runs,
/// also used by end-to-end tests and `bench` to run a real gateway in-process.
public final class RunningGateway: Sendable {
    /// The gateway.
    public let gateway: Gateway
    /// The Store's single writer.
    public let writer: StoreWriter
    /// The broker (`LocalBroker`, or `RedisBroker` with `--broker redis://…`).
    public let broker: any Broker
    /// Observers of durable changes (the broker publisher is one of them).
    public let observers: ObserverRegistry
    /// Event loops serving clients.
    public let loopCount: Int
    /// Shadow-store differences, when a shadow store runs.
    public let divergences: ShadowDivergenceReporter
    /// The operations surface (metrics, health, admin API), when it listens.
    public let admin: AdminServer?
    /// The backend HTTP API, when it listens.
    public let api: APIServer?
    /// Who is subscribed where (`LocalPresence`, or `RedisPresence` with the Redis broker).
    public let presence: any PresenceStore

    private init(
        gateway: Gateway,
        writer: StoreWriter,
        broker: any Broker,
        observers: ObserverRegistry,
        loopCount: Int,
        divergences: ShadowDivergenceReporter,
        admin: AdminServer?,
        api: APIServer?,
        presence: any PresenceStore
    ) {
        self.admin = admin
        self.api = api
        self.presence = presence
        self.divergences = divergences
        self.gateway = gateway
        self.writer = writer
        self.broker = broker
        self.observers = observers
        self.loopCount = loopCount
    }

    /// Opens the store(s), starts the writer, the broker and the gateway, from `serve`'s configuration.
    static func start(
        _ configuration: ServeConfiguration,
        security: ServeSecurityConfiguration.Prepared,
        environment: [String: String] = [:],
        logger: Logger
    ) throws -> RunningGateway {
        let redis = RedisSettings(
            password: try RedisSettings.password(file: configuration.redisPasswordFile, environment: environment),
            channels: RedisSettings.channels(shards: configuration.redisChannelShards),
            durability: RedisSettings.durability(replicas: configuration.redisWaitReplicas, timeout: configuration.redisWaitTimeout)
        )
        let catalog = try StoreFactory.catalog(file: configuration.stateMachinesFile)
        let primary = try StoreFactory.specification(configuration.store)
        let shadow = try configuration.shadowStore.map { (text) throws(CommandLineError) in
            try StoreFactory.specification(text, option: "shadow-store")
        }
        let loops = configuration.loops == 0 ? EventLoopGroup.coreCount : configuration.loops
        let nodeID = configuration.nodeID ?? "\(ProcessInfo.processInfo.hostName)-\(getpid())"
        let peer = PeerSettings(
            nodeID: nodeID,
            pingIntervalMillis: milliseconds(configuration.pingInterval),
            pongTimeoutMillis: milliseconds(configuration.pongTimeout),
            minPingIntervalMillis: configuration.pingIntervalBounds.map { milliseconds($0.lowerBound) } ?? 0,
            maxPingIntervalMillis: configuration.pingIntervalBounds.map { milliseconds($0.upperBound) } ?? 0,
            handshakeTimeoutMillis: milliseconds(configuration.handshakeTimeout),
            maxSubscriptions: configuration.maxSubscriptions,
            maxFrameSize: configuration.maxFrameSize,
            publishesPerSecond: configuration.security.publishRate,
            publishBurst: configuration.security.publishBurst
        )
        let webSocket = configuration.webSocket.listeners(tls: security.tls, maxFrameSize: configuration.maxFrameSize)
        let gatewayConfiguration = GatewayConfiguration(
            host: configuration.listen.host,
            port: Int(configuration.listen.port),
            loopCount: loops,
            peer: peer,
            maxConnections: configuration.maxConnections,
            outboundLimit: configuration.outboundLimit,
            slowPolicy: configuration.slowPolicy == .coalesce ? .coalesce : .disconnect,
            drainPeriod: configuration.drainPeriod,
            additionalListeners: configuration.security.listeners(security) + webSocket.listeners,
            admission: configuration.security.admission
        )
        let running = try start(
            gateway: gatewayConfiguration,
            store: primary,
            shadow: shadow,
            catalog: catalog,
            retention: configuration.retention,
            authorizer: security.authorizer,
            logger: logger,
            operationsListen: configuration.metricsListen,
            drainAction: { kill(getpid(), SIGTERM) },
            broker: configuration.broker,
            redis: redis,
            api: configuration.api.listen.map { ($0, configuration.api.limits) },
            presence: configuration.presence
        )
        // The admin and example pages are served by the operations listener: same host, another port.
        if let admin = running.admin { webSocket.origins.trust(port: admin.port) }
        return running
    }

    /// Opens the store(s), starts the writer, the broker and the gateway. `authorizer` checks connect tokens
    /// (`JWTAuthorizer` in production; the default admits everyone, for tests and `--insecure-dev`).
    public static func start(
        gateway gatewayConfiguration: GatewayConfiguration,
        store primary: StoreSpecification,
        shadow: StoreSpecification? = nil,
        catalog: StateMachineCatalog = .builtIn,
        retention: StoreRetention = .standard,
        authorizer: any Authorizer = AllowAllAuthorizer(),
        logger: Logger = .disabled,
        operationsListen: HostPort? = nil,
        drainAction: (@Sendable () -> Void)? = nil,
        broker brokerChoice: BrokerChoice = .local,
        redis: RedisSettings = RedisSettings(),
        api apiListen: (HostPort, APIServer.Configuration)? = nil,
        presence presenceSettings: ServePresenceConfiguration = ServePresenceConfiguration()
    ) throws -> RunningGateway {
        let reporter = ShadowDivergenceReporter(logger: logger.labeled("shadow"))
        let observers = ObserverRegistry(logger: logger)
        let counters = GatewayCounters()
        let broker = try BrokerFactory.make(brokerChoice, store: primary, redis: redis, logger: logger)
        // A Redis store on the Redis broker's server publishes each record from its apply script: no second publish.
        let storePublishes = BrokerFactory.storePublishes(primary, to: brokerChoice)
        let brokerPublisher: BrokerPublisher? =
            storePublishes ? nil : BrokerPublisher(broker: broker, logger: logger, counters: counters)
        var committed: (@Sendable ([OrderChangeRecord]) -> Void)?
        if let brokerPublisher { committed = { records in brokerPublisher.publish(records) } }
        if storePublishes, let lines = BrokerFactory.lineChannelFeed(broker) { committed = lines }
        let writer: StoreWriter
        do {
            writer = try StoreWriter(
                observers: observers,
                configuration: StoreWriter.Configuration(
                    logger: logger.labeled("store"),
                    committed: committed,
                    // A memory commit is short and never blocks: the loop that read a few publishes commits them
                    // itself before it sleeps, and no thread has to wake in between (big batches still go to
                    // the writer thread, which then works in parallel with the loops).
                    commitsOnCaller: primary == .memory && shadow == nil
                )
            ) { () throws(StoreError) -> any OrderStore in
                let store = try StoreFactory.open(
                    primary,
                    catalog: catalog,
                    retention: retention,
                    redis: redis,
                    publishes: storePublishes
                )
                guard let shadow else { return store }
                let shadowStore = try StoreFactory.open(shadow, catalog: catalog, retention: retention, redis: redis)
                return ShadowOrderStore(primary: store, shadow: shadowStore, reporter: reporter)
            }
        } catch {
            broker.shutdown()
            throw CommandFailure("cannot open store \(primary): \(error)")
        }
        let loops = gatewayConfiguration.loopCount
        let presence: any PresenceStore
        do {
            presence = try presenceSettings.make(
                broker: brokerChoice, redis: redis, nodeID: gatewayConfiguration.peer.nodeID, logger: logger
            )
        } catch {
            broker.shutdown()
            writer.shutdown()
            throw error
        }
        let gateway = Gateway(
            configuration: gatewayConfiguration,
            codec: ProtobufFrameCodec(),
            store: StoreWriterAccess(writer: writer, catalog: catalog),
            broker: broker,
            authorizer: authorizer,
            logger: logger.labeled("gateway"),
            counters: counters,
            presence: presence
        )
        try broker.start(delivering: gateway.delivery)
        do {
            try BrokerFactory.waitUntilConnected(broker)
        } catch {
            broker.shutdown()
            writer.shutdown()
            throw error
        }
        do {
            try gateway.start()
        } catch {
            broker.shutdown()
            writer.shutdown()
            throw CommandFailure("\(error)")
        }
        var admin: AdminServer?
        if let operationsListen {
            let server = AdminServer(
                gateway: gateway,
                store: StoreWriterAdminAccess(writer: writer),
                observers: observers,
                authorizer: authorizer,
                toggles: StoreWriterToggles(writer: writer, observers: observers, publisher: brokerPublisher, clock: SystemWallClock()),
                logger: logger.labeled("admin"),
                version: LonglinkVersion.current,
                drainAction: drainAction ?? { [gateway] in Thread { gateway.drain() }.start() }
            )
            do {
                try server.start(host: operationsListen.host, port: Int(operationsListen.port))
            } catch {
                gateway.drain()
                gateway.stop()
                broker.shutdown()
                writer.shutdown()
                throw CommandFailure("\(ListenFailure(address: "\(operationsListen)", error: error)) (--metrics-listen)")
            }
            admin = server
        }
        var api: APIServer?
        if let (listen, limits) = apiListen {
            do {
                api = try ServeAPI.start(listen, limits: limits, gateway: gateway, writer: writer, authorizer: authorizer, logger: logger)
            } catch {
                admin?.stop()
                gateway.drain()
                gateway.stop()
                broker.shutdown()
                writer.shutdown()
                throw error
            }
        }
        let running = RunningGateway(
            gateway: gateway,
            writer: writer,
            broker: broker,
            observers: observers,
            loopCount: loops,
            divergences: reporter,
            admin: admin,
            api: api,
            presence: presence
        )
        admin?.markReady()
        return running
    }

    /// Graceful stop: drain clients, stop loops, then the broker path, then the Store (flushing its queue).
    public func drainAndStop() {
        admin?.markDraining()
        gateway.drain()
        admin?.stop()
        api?.stop()
        gateway.stop()
        presence.shutdown()
        writer.shutdown()
        observers.waitUntilDelivered()
        broker.shutdown()
    }
}

/// Whole milliseconds of a duration.
func milliseconds(_ duration: Duration) -> UInt64 {
    let (seconds, attoseconds) = duration.components
    return UInt64(max(0, seconds)) * 1000 + UInt64(max(0, attoseconds)) / 1_000_000_000_000_000
}
