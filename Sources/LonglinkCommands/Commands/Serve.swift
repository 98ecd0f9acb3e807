import Foundation
import Glibc
import Synchronization
import LonglinkLoop
import LonglinkProtobuf
import LonglinkWebSocket
import LonglinkStores
import LonglinkGateway
import LonglinkCore
import LonglinkServer
import LonglinkOperations

/// `longlink serve`: the gateway. It turns the options into configurations and calls LonglinkServer's
/// `RunningGateway`, the composition that builds the concrete store, broker and presence and wires them; then it
/// serves until SIGTERM/SIGINT and drains.
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
        // The stopped gateway (its store's tables among it) is left for the process's exit to free: the kernel
        // takes the memory back at once, where freeing an in-memory store record by record costs as much as
        // writing it (Redis exits without freeing its keyspace either). Nothing durable is left: the drain closed
        // the stores and the broker.
        stoppedGateways.withLock { $0.append(running) }
        return 0
    }
}

/// Gateways `serve` stopped, kept until the process exits (see the end of `runServer`).
private let stoppedGateways = Mutex<[RunningGateway]>([])

extension RunningGateway {
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
            admission: configuration.security.admission,
            flush: configuration.flush
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
}

/// Whole milliseconds of a duration.
func milliseconds(_ duration: Duration) -> UInt64 {
    let (seconds, attoseconds) = duration.components
    return UInt64(max(0, seconds)) * 1000 + UInt64(max(0, attoseconds)) / 1_000_000_000_000_000
}
