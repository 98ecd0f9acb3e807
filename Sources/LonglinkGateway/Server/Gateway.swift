public import LonglinkCore
import LonglinkLoop
import Glibc
import Synchronization

/// A running Longlink gateway: one event loop per configured thread, each with its own `SO_REUSEPORT`
/// listener, its connections and its hub; Store access, broker, codec and authorizer injected at start.
///
/// Lifecycle (Hummingbird's `Server.State`): `initial → running → draining → stopped`. `start()` binds and
/// starts the loops; `drain()` stops accepting, disconnects clients with `shutdown` paced over the drain
/// period and returns when they are gone (or the period plus a grace second passed); `stop()` stops the loops.
/// The caller then shuts down the broker and the Store writer, in that order.
public final class Gateway: Sendable {
    /// Where the gateway is in its life.
    public enum State: Sendable, Hashable {
        case initial, running, draining, stopped
    }

    let shared: GatewayShared
    private let state = Mutex(State.initial)
    private let group = Mutex<EventLoopGroup?>(nil)
    private let boundPorts = Mutex<[Int]>([])
    /// The broker delivery to hand to `Broker.start(delivering:)`.
    public let delivery: any BrokerDelivery

    /// Creates a gateway; nothing listens until `start()`.
    public init(
        configuration: GatewayConfiguration,
        codec: any FrameCodec,
        store: StoreAccess,
        broker: any Broker,
        authorizer: any Authorizer,
        logger: Logger = .disabled,
        clock: any WallClock = SystemWallClock(),
        counters: GatewayCounters = GatewayCounters(),
        presence: any PresenceStore = LocalPresence()
    ) {
        let shared = GatewayShared(
            configuration: configuration,
            codec: codec,
            store: store,
            broker: broker,
            authorizer: authorizer,
            logger: logger,
            counters: counters,
            clock: clock,
            presence: presence
        )
        self.shared = shared
        self.delivery = GatewayDelivery(shared: shared)
    }

    /// The process-wide counters.
    public var counters: GatewayCounters { shared.counters }
    /// The bound port (the real one when configured with port 0); 0 before `start()`.
    public var port: Int { port(ofListener: 0) }
    /// The bound port of a listener: 0 is the main one, 1... the `additionalListeners` in order; 0 before `start()`.
    public func port(ofListener index: Int) -> Int {
        boundPorts.withLock { index < $0.count ? $0[index] : 0 }
    }
    /// The current state.
    public var currentState: State { state.withLock { $0 } }

    /// Binds one listener per loop on the configured address and starts the loops. Throws when an address
    /// cannot be bound (in use, also by another process with `SO_REUSEPORT`; not local; no permission).
    public func start() throws(ListenFailure) {
        let proceed = state.withLock { state -> Bool in
            guard state == .initial else { return false }
            state = .running
            return true
        }
        precondition(proceed, "Gateway.start() called twice")
        let configuration = shared.configuration
        let specs = [GatewayListener(host: configuration.host, port: configuration.port, transport: configuration.transport)]
            + configuration.additionalListeners
        let loopCount = max(1, configuration.loopCount)
        // fds[loop][listener]: every loop has its own SO_REUSEPORT socket for every listener, on a port no other
        // process listens on (listenShared refuses one that is taken, so a second gateway cannot start there).
        var fds: [[CInt]] = Array(repeating: [], count: loopCount)
        var ports: [Int] = []
        for spec in specs {
            do {
                let group = try Socket.listenShared(host: spec.host, port: spec.port, count: loopCount)
                for (loop, fd) in group.enumerated() { fds[loop].append(fd) }
                ports.append(try Socket.localPort(group[0]))
            } catch {
                for fd in fds.joined() { Socket.close(fd) }
                state.withLock { $0 = .stopped }
                throw ListenFailure(address: "\(spec.host):\(spec.port)", error: error)
            }
        }
        boundPorts.withLock { $0 = ports }
        let shared = self.shared
        let listeningFDs = fds
        let factories = specs.map(\.transport)
        let loops: EventLoopGroup
        do {
            loops = try EventLoopGroup(numberOfThreads: loopCount)
        } catch {
            throw ListenFailure(address: specs.map { "\($0.host):\($0.port)" }.joined(separator: ", "), error: error)
        }
        // Each loop's port (its gateway's handle and its push inbox) exists before the gateway, which the loop makes
        // in its first job: every job posted to a loop through its port runs after that one and finds the gateway.
        let loopPorts = loops.loops.map { LoopPort(bound: LoopBound(loop: $0), pushes: PushInbox()) }
        for (loop, port) in zip(loops.loops, loopPorts) {
            loop.execute { context in
                do {
                    let mine = listeningFDs[context.eventLoop.id]
                    _ = try LoopGateway(
                        context: context,
                        shared: shared,
                        port: port,
                        listeners: zip(mine, factories).map { LoopGateway.ListenerSpec(fd: $0, transport: $1) }
                    )
                } catch {
                    shared.logger.error("loop \(context.eventLoop.id) could not start: \(error)")
                }
            }
        }
        shared.loopGateways.withLock { $0 = loopPorts }
        group.withLock { $0 = loops }
        for (spec, port) in zip(specs, ports) {
            shared.logger.info(
                "listening",
                [("address", "\(spec.host):\(port)"), ("transport", "\(type(of: spec.transport))"), ("loops", "\(loopCount)")]
            )
        }
    }

    /// Stops accepting and disconnects every client with `shutdown`, paced over the drain period. Blocks the
    /// calling thread (not a loop thread) until all clients are gone or the period plus one second passed.
    public func drain() {
        let proceed = state.withLock { state -> Bool in
            guard state == .running else { return false }
            state = .draining
            return true
        }
        guard proceed else { return }
        let ports = shared.loopGateways.withLock { $0 }
        shared.drainedLoops.store(0, ordering: .relaxed)
        for port in ports {
            port.bound.execute { $0.drain() }
        }
        let period = shared.configuration.drainPeriod + .seconds(1)
        let deadline = ContinuousClock.now + period
        while shared.drainedLoops.load(ordering: .relaxed) < ports.count && ContinuousClock.now < deadline {
            usleep(5_000)
        }
        // Give the last disconnect frames one more loop iteration to reach the socket.
        usleep(20_000)
    }

    /// Stops the loops and joins their threads; open connections are closed by the kernel when the process
    /// exits. Call `drain()` first for a graceful stop.
    public func stop() {
        let loops = group.withLock { group -> EventLoopGroup? in
            defer { group = nil }
            return group
        }
        loops?.shutdownGracefully()
        state.withLock { $0 = .stopped }
    }
}
