import LonglinkCore
import LonglinkProtobuf
import Synchronization

/// What the app-facing handle and the loop-side driver share: configuration, observers, the connection state
/// and its listeners. Thread-safe.
final class ClientShared: Sendable {
    let configuration: Mutex<ClientConfiguration>
    let codec: any FrameCodec = ProtobufFrameCodec()
    let observers: ObserverRegistry
    let logger: Logger
    /// Where the token provider runs (nil without a provider, or when its thread could not start: then the
    /// provider runs as a plain task).
    let tokenExecutor: TokenExecutor?
    /// The last value received for each feature toggle (`config://` route).
    let toggleValues = ToggleCache()
    /// The heartbeat interval in use and what was learned (`LonglinkClient.heartbeat`).
    let heartbeat = Mutex(HeartbeatStatus(phase: .inactive, interval: .zero, learned: nil))
    private let state = Mutex<ConnectionState>(.idle)
    private let stateListeners = Mutex<[UInt64: AsyncStream<ConnectionState>.Continuation]>([:])
    private let receiptListeners = Mutex<[UInt64: AsyncStream<DeliveryReceipt>.Continuation]>([:])
    private let errorHandler = Mutex<(@Sendable (ErrorFrame) -> Void)?>(nil)
    private let tokenHandler = Mutex<(@Sendable (TokenExpiring) -> Void)?>(nil)
    private let refusalHandler = Mutex<(@Sendable (Route, ErrorFrame) -> Void)?>(nil)
    private let nextListenerID = Atomic<UInt64>(1)
    /// TLS handshakes finished by this client: full ones and resumed ones (`LonglinkClient.tlsHandshakes`).
    let tlsFullHandshakes = Atomic<Int>(0)
    let tlsResumedHandshakes = Atomic<Int>(0)
    /// Whether the newest TLS handshake resumed: 1 yes, 0 no, -1 none yet.
    let tlsLastResumed = Atomic<Int>(-1)

    init(configuration: ClientConfiguration, logger: Logger) {
        self.configuration = Mutex(configuration)
        self.observers = ObserverRegistry(logger: logger)
        self.logger = logger
        self.tokenExecutor = configuration.tokenProvider == nil ? nil : try? TokenExecutor(backend: configuration.selectorBackend)
    }

    var currentState: ConnectionState { state.withLock { $0 } }

    func setState(_ newState: ConnectionState) {
        let changed = state.withLock { current -> Bool in
            guard current != newState else { return false }
            current = newState
            return true
        }
        guard changed else { return }
        logger.debug("connection state: \(newState)")
        for continuation in stateListeners.withLock({ Array($0.values) }) { continuation.yield(newState) }
    }

    func stateChanges() -> AsyncStream<ConnectionState> {
        let (stream, continuation) = AsyncStream.makeStream(of: ConnectionState.self, bufferingPolicy: .bufferingNewest(64))
        let id = nextListenerID.wrappingAdd(1, ordering: .relaxed).oldValue
        continuation.yield(currentState)
        stateListeners.withLock { $0[id] = continuation }
        continuation.onTermination = { [weak self] _ in
            _ = self?.stateListeners.withLock { $0.removeValue(forKey: id) }
        }
        return stream
    }

    func receipts() -> AsyncStream<DeliveryReceipt> {
        let (stream, continuation) = AsyncStream.makeStream(of: DeliveryReceipt.self, bufferingPolicy: .bufferingNewest(4096))
        let id = nextListenerID.wrappingAdd(1, ordering: .relaxed).oldValue
        receiptListeners.withLock { $0[id] = continuation }
        continuation.onTermination = { [weak self] _ in
            _ = self?.receiptListeners.withLock { $0.removeValue(forKey: id) }
        }
        return stream
    }

    func deliverReceipt(_ receipt: DeliveryReceipt) {
        for continuation in receiptListeners.withLock({ Array($0.values) }) { continuation.yield(receipt) }
    }

    func onError(_ handler: @escaping @Sendable (ErrorFrame) -> Void) { errorHandler.withLock { $0 = handler } }
    func reportError(_ error: ErrorFrame) {
        logger.warning("server error: \(error)")
        errorHandler.withLock { $0 }?(error)
    }

    func onSubscriptionRefused(_ handler: @escaping @Sendable (Route, ErrorFrame) -> Void) {
        refusalHandler.withLock { $0 = handler }
    }
    func reportSubscriptionRefused(_ route: Route, _ error: ErrorFrame) { refusalHandler.withLock { $0 }?(route, error) }

    private let subscribedHandler = Mutex<(@Sendable (Route, Bool) -> Void)?>(nil)
    func onSubscribed(_ handler: @escaping @Sendable (Route, Bool) -> Void) { subscribedHandler.withLock { $0 = handler } }
    func reportSubscribed(_ route: Route, recovered: Bool) { subscribedHandler.withLock { $0 }?(route, recovered) }

    private let presenceHandler = Mutex<(@Sendable (PresenceEvent) -> Void)?>(nil)
    func onPresenceEvent(_ handler: @escaping @Sendable (PresenceEvent) -> Void) { presenceHandler.withLock { $0 = handler } }
    func reportPresenceEvent(_ event: PresenceEvent) { presenceHandler.withLock { $0 }?(event) }

    func onTokenExpiring(_ handler: @escaping @Sendable (TokenExpiring) -> Void) { tokenHandler.withLock { $0 = handler } }
    func reportTokenExpiring(_ warning: TokenExpiring) { tokenHandler.withLock { $0 }?(warning) }

    func finish() {
        tokenExecutor?.shutdown()
        for continuation in stateListeners.withLock({ Array($0.values) }) { continuation.finish() }
        for continuation in receiptListeners.withLock({ Array($0.values) }) { continuation.finish() }
    }
}
