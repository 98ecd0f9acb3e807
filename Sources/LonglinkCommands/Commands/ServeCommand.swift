import Foundation
import LonglinkLoop
import LonglinkProtobuf
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
            its own thread, and the local broker. SIGTERM or SIGINT drain: stop accepting, send every client a
            `shutdown` disconnect with a jittered reconnect delay paced over --drain-period, flush, close the
            store, exit 0.
            """,
        options: ServeOptions.specs
    ) { options, context in
        let configuration = try ServeConfiguration(options: options)
        return try runServer(configuration, context: context)
    }

    /// Builds everything, serves until SIGTERM/SIGINT, drains and returns the exit code.
    static func runServer(_ configuration: ServeConfiguration, context: CommandContext) throws -> Int32 {
        let logger = Logger(label: "longlink", level: configuration.logLevel, sink: StderrLogSink())
        let running = try RunningGateway.start(configuration, environment: context.environment, logger: logger)
        context.io.err(
            """
            longlink \(LonglinkVersion.current) serving on \(configuration.listen.host):\(running.gateway.port) \
            (store \(configuration.store)\(configuration.shadowStore.map { ", shadow \($0)" } ?? ""), \
            \(running.loopCount) loops)
            WARNING: no token secret configured: every client is admitted as admin (development mode)
            Try, in another terminal:
              longlink subscribe order://taxi/8812 --server 127.0.0.1:\(running.gateway.port)
              longlink publish --order 8812 --line taxi --state created --server 127.0.0.1:\(running.gateway.port)
            """
        )
        let control = try EventLoop(id: 1_000)
        var signals: SignalSource?
        try control.run { loop in
            do {
                signals = try SignalSource(signals: UnixSignal.lifecycle, on: loop) { signal in
                    if signal == .hangup {
                        logger.notice("SIGHUP: configuration reload is not supported yet; ignoring")
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
    /// The broker publisher's registration; nil when the store publishes itself (Redis store + Redis broker).
    let brokerToken: ObservationToken?
    /// Event loops serving clients.
    public let loopCount: Int
    /// Shadow-store differences, when a shadow store runs.
    public let divergences: ShadowDivergenceReporter

    private init(
        gateway: Gateway,
        writer: StoreWriter,
        broker: any Broker,
        observers: ObserverRegistry,
        brokerToken: ObservationToken?,
        loopCount: Int,
        divergences: ShadowDivergenceReporter
    ) {
        self.divergences = divergences
        self.gateway = gateway
        self.writer = writer
        self.broker = broker
        self.observers = observers
        self.brokerToken = brokerToken
        self.loopCount = loopCount
    }

    /// Opens the store(s), starts the writer, the broker and the gateway, from `serve`'s configuration.
    static func start(_ configuration: ServeConfiguration, environment: [String: String] = [:], logger: Logger) throws
        -> RunningGateway
    {
        let redis = RedisSettings(
            password: try RedisSettings.password(file: configuration.redisPasswordFile, environment: environment),
            channels: RedisSettings.channels(shards: configuration.redisChannelShards)
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
            handshakeTimeoutMillis: milliseconds(configuration.handshakeTimeout),
            maxSubscriptions: configuration.maxSubscriptions,
            maxFrameSize: configuration.maxFrameSize
        )
        let gatewayConfiguration = GatewayConfiguration(
            host: configuration.listen.host,
            port: Int(configuration.listen.port),
            loopCount: loops,
            peer: peer,
            maxConnections: configuration.maxConnections,
            outboundLimit: configuration.outboundLimit,
            slowPolicy: configuration.slowPolicy == .coalesce ? .coalesce : .disconnect,
            drainPeriod: configuration.drainPeriod
        )
        return try start(
            gateway: gatewayConfiguration,
            store: primary,
            shadow: shadow,
            catalog: catalog,
            retention: configuration.retention,
            logger: logger,
            broker: configuration.broker,
            redis: redis
        )
    }

    /// Opens the store(s), starts the writer, the broker and the gateway.
    public static func start(
        gateway gatewayConfiguration: GatewayConfiguration,
        store primary: StoreSpecification,
        shadow: StoreSpecification? = nil,
        catalog: StateMachineCatalog = .builtIn,
        retention: StoreRetention = .standard,
        logger: Logger = .disabled,
        broker brokerChoice: BrokerChoice = .local,
        redis: RedisSettings = RedisSettings()
    ) throws -> RunningGateway {
        let broker = try BrokerFactory.make(brokerChoice, store: primary, redis: redis, logger: logger)
        let storePublishes = BrokerFactory.storePublishes(primary, to: brokerChoice)
        let reporter = ShadowDivergenceReporter(logger: Logger(label: "shadow", level: logger.level, sink: logger.sink))
        let observers = ObserverRegistry(logger: logger)
        let writer: StoreWriter
        do {
            writer = try StoreWriter(
                observers: observers,
                configuration: StoreWriter.Configuration(logger: Logger(label: "store", level: logger.level, sink: logger.sink))
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
        let gateway = Gateway(
            configuration: gatewayConfiguration,
            codec: ProtobufFrameCodec(),
            store: StoreWriterAccess(writer: writer),
            broker: broker,
            authorizer: AllowAllAuthorizer(),
            logger: Logger(label: "gateway", level: logger.level, sink: logger.sink)
        )
        try broker.start(delivering: gateway.delivery)
        let token = storePublishes
            ? nil : observers.observe(.all, BrokerPublisher(broker: broker, logger: logger), limit: Int.max)
        do {
            try BrokerFactory.waitUntilConnected(broker)
        } catch {
            token?.cancel()
            broker.shutdown()
            writer.shutdown()
            throw error
        }
        do {
            try gateway.start()
        } catch {
            token?.cancel()
            broker.shutdown()
            writer.shutdown()
            throw CommandFailure("cannot listen on \(gatewayConfiguration.host):\(gatewayConfiguration.port): \(error)")
        }
        return RunningGateway(
            gateway: gateway,
            writer: writer,
            broker: broker,
            observers: observers,
            brokerToken: token,
            loopCount: loops,
            divergences: reporter
        )
    }

    /// Graceful stop: drain clients, stop loops, then the broker path, then the Store (flushing its queue).
    public func drainAndStop() {
        gateway.drain()
        gateway.stop()
        writer.shutdown()
        observers.waitUntilDelivered()
        brokerToken?.cancel()
        broker.shutdown()
    }
}

/// Whole milliseconds of a duration.
func milliseconds(_ duration: Duration) -> UInt64 {
    let (seconds, attoseconds) = duration.components
    return UInt64(max(0, seconds)) * 1000 + UInt64(max(0, attoseconds)) / 1_000_000_000_000_000
}
