import Foundation
import LonglinkProtobuf
public import LonglinkStores
public import LonglinkGateway
public import LonglinkOperations
public import LonglinkCore

/// A started gateway with everything it owns, in the order they must stop: the composition `serve` runs,
/// also used by end-to-end tests and `bench` to run a real gateway in-process.
public final class RunningGateway: Sendable {
    /// The gateway.
    public let gateway: Gateway
    /// The Store's single writer.
    public let writer: StoreWriter
    /// The feature toggles (their store is used on the writer's thread).
    public let toggles: ToggleService
    /// The broker (`LocalBroker`, or `RedisBroker` with `--broker redis://…`).
    public let broker: any Broker
    /// Observers of durable changes (the admin tap, toggles); the broker is fed by the writer's `BrokerHandOff`, not here.
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
        toggles: ToggleService,
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
        self.toggles = toggles
        self.broker = broker
        self.observers = observers
        self.loopCount = loopCount
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
        presence presenceSettings: PresenceSettings = PresenceSettings()
    ) throws -> RunningGateway {
        let reporter = ShadowDivergenceReporter(logger: logger.labeled("shadow"))
        let observers = ObserverRegistry(logger: logger)
        let counters = GatewayCounters()
        let broker = try BrokerFactory.make(brokerChoice, store: primary, redis: redis, logger: logger)
        // A Redis store on the Redis broker's server publishes each record from its apply script: no second publish.
        let storePublishes = BrokerFactory.storePublishes(primary, to: brokerChoice)
        let brokerPublisher: BrokerPublisher? =
            storePublishes ? nil : BrokerPublisher(broker: broker, logger: logger, counters: counters)
        var committed: BrokerHandOff?
        if let brokerPublisher { committed = BrokerHandOff { records in brokerPublisher.publish(records) } }
        if storePublishes, let lines = BrokerFactory.lineChannelFeed(broker) { committed = BrokerHandOff(lines) }
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
            throw ServerFailure("cannot open store \(primary): \(error)")
        }
        // Toggles beside the orders, served on the writer's thread; a new value always goes to the broker (a Redis
        // store publishes only the orders it applies).
        let toggles: ToggleService
        do {
            toggles = ToggleService(
                store: try StoreFactory.openToggles(primary: primary, shadow: shadow, reporter: reporter, redis: redis),
                writer: writer,
                broker: broker,
                observers: observers,
                logger: logger.labeled("toggles")
            )
        } catch {
            broker.shutdown()
            writer.shutdown()
            throw ServerFailure("cannot open the feature toggles of \(primary): \(error)")
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
            store: StoreAccess(writer: writer, catalog: catalog, toggles: toggles),
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
            throw ServerFailure("\(error)")
        }
        var admin: AdminServer?
        if let operationsListen {
            let server = AdminServer(
                gateway: gateway,
                writer: writer,
                observers: observers,
                authorizer: authorizer,
                toggles: toggles,
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
                throw ServerFailure("\(ListenFailure(address: "\(operationsListen)", error: error)) (--metrics-listen)")
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
            toggles: toggles,
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
        toggles.shutdown()
        observers.waitUntilDelivered()
        broker.shutdown()
    }
}
