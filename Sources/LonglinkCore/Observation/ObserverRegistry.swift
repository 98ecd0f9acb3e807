import Dispatch
import Synchronization

/// Who watches which routes, and the delivery of `contentDidChange` to them.
///
/// The Store's writer calls `notify(_:)` after a batch is durable (never before). Delivery runs off the
/// writer's thread: each registration has its own serial queue and a bound on undelivered changes
/// (`limit`, default `defaultLimit`). A slow observer therefore delays only itself; when it falls behind by
/// more than its limit, further changes for it are dropped and counted (`droppedCount`, and a warning is
/// logged once per overflow episode) until it catches up. Observers that must not lose changes (the broker
/// adapter) register with a larger limit, or observe from the writer side of their own queue. Changes reach an
/// observer in the order they were committed.
///
/// An observer whose `contentDidChange` is short and never blocks (a ring of recent changes, a counter) can be
/// registered `inline` instead: it is called on the notifying thread before `notify` returns, with no queue, no hop
/// to another thread and no backlog per commit.
public final class ObserverRegistry: Sendable {
    /// The bound on undelivered changes per registration when `observe` is not given one.
    public let defaultLimit: Int
    private let logger: Logger
    /// The registrations in registration order, so delivery order among observers is stable. `notify` takes this
    /// array (one reference count) instead of building one per commit.
    private let state = Mutex<[Registration]>([])
    private let dropped = Atomic<Int>(0)

    /// An empty registry.
    public init(defaultLimit: Int = 4_096, logger: Logger = .disabled) {
        self.defaultLimit = max(1, defaultLimit)
        self.logger = logger
    }

    /// Watches `pattern` (one route, a namespace such as all taxi orders, a kind, or `.all`) with `observer`,
    /// held strongly until the token is cancelled or released.
    public func observe(_ pattern: RoutePattern, _ observer: any ContentObserver, limit: Int? = nil)
        -> ObservationToken
    {
        register(Registration(pattern: pattern, observer: observer, limit: max(1, limit ?? defaultLimit), inline: false))
    }

    /// Watches `pattern` with an observer called on the notifying thread (the Store's writer, or the loop that
    /// committed), in commit order, before `notify` returns: no queue and no thread hop per commit. Only for an
    /// observer whose `contentDidChange` is short and never blocks or calls back into the Store (it delays the
    /// commit's completions).
    public func observeInline(_ pattern: RoutePattern, _ observer: any ContentObserver) -> ObservationToken {
        register(Registration(pattern: pattern, observer: observer, limit: Int.max, inline: true))
    }

    private func register(_ registration: Registration) -> ObservationToken {
        state.withLock { $0.append(registration) }
        return ObservationToken { [weak self] in
            registration.active.store(false, ordering: .releasing)
            self?.remove(registration)
        }
    }

    /// Watches one route.
    public func observe(_ route: Route, _ observer: any ContentObserver, limit: Int? = nil) -> ObservationToken {
        observe(.exact(route), observer, limit: limit)
    }

    /// Watches `pattern` with a delegate held weakly (`DelegateObserver`).
    public func observe(_ pattern: RoutePattern, delegate: any ContentObserver, limit: Int? = nil)
        -> ObservationToken
    {
        observe(pattern, DelegateObserver(delegate), limit: limit)
    }

    /// Watches `pattern` with a closure (`BlockObserver`); errors it throws go to `onError`.
    public func observe(
        _ pattern: RoutePattern,
        limit: Int? = nil,
        onError: (@Sendable (any Error, ContentChange) -> Void)? = nil,
        _ block: @escaping @Sendable (ContentChange) throws -> Void
    ) -> ObservationToken {
        observe(pattern, BlockObserver(block, onError: onError), limit: limit)
    }

    /// The changes on `pattern` as an async sequence. The stream buffers the newest `bufferingNewest` changes
    /// its consumer has not taken yet (older ones are dropped); the observation ends when the stream is dropped
    /// or its consuming task is cancelled.
    public func changes(_ pattern: RoutePattern, bufferingNewest: Int = 1_024) -> AsyncStream<ContentChange> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: ContentChange.self,
            bufferingPolicy: .bufferingNewest(max(1, bufferingNewest))
        )
        let token = observe(pattern, StreamObserver(continuation), limit: Int.max)
        continuation.onTermination = { _ in token.cancel() }
        return stream
    }

    /// Hands durable changes to the matching observers (called by the Store's writer after each commit).
    /// Returns at once; delivery happens on each registration's queue.
    public func notify(_ changes: [ContentChange]) {
        guard !changes.isEmpty else { return }
        let registrations = state.withLock { $0 }
        for registration in registrations {
            if registration.inline {
                for change in changes where registration.pattern.matches(change.route) {
                    guard registration.active.load(ordering: .acquiring) else { break }
                    registration.observer.contentDidChange(change)
                }
                continue
            }
            if let delegate = registration.observer as? DelegateObserver, delegate.isReleased {
                registration.active.store(false, ordering: .releasing)
                remove(registration)
                continue
            }
            var matching: [ContentChange] = []
            for change in changes where registration.pattern.matches(change.route) { matching.append(change) }
            if matching.isEmpty { continue }
            let admitted = registration.admit(matching.count)
            if admitted < matching.count {
                let lost = matching.count - admitted
                dropped.add(lost, ordering: .relaxed)
                registration.dropped.add(lost, ordering: .relaxed)
                if registration.overflowing.exchange(true, ordering: .relaxed) == false {
                    logger.warning(
                        "observer fell behind by \(registration.limit) changes; dropping",
                        [("pattern", registration.pattern.description)]
                    )
                }
                matching.removeLast(lost)
                if matching.isEmpty { continue }
            }
            let batch = matching
            registration.queue.async { registration.deliver(batch) }
        }
    }

    /// How many observations are registered.
    public var observerCount: Int { state.withLock { $0.count } }

    /// How many changes were dropped because an observer fell behind its limit, over all observers.
    public var droppedCount: Int { dropped.load(ordering: .relaxed) }

    /// Waits until every change handed to `notify` so far was delivered (or dropped). For tests and shutdown.
    public func waitUntilDelivered() {
        let registrations = state.withLock { $0 }
        for registration in registrations { registration.queue.sync {} }
    }

    private func remove(_ registration: Registration) {
        state.withLock { $0.removeAll { $0 === registration } }
    }
}

/// One observation: what it watches, who is told, its delivery queue and its backlog (an inline one uses
/// neither: it is called on the notifying thread).
private final class Registration: Sendable {
    let pattern: RoutePattern
    let observer: any ContentObserver
    let limit: Int
    let inline: Bool
    let queue = DispatchQueue(label: "longlink.observer")
    let pending = Atomic<Int>(0)
    let dropped = Atomic<Int>(0)
    let overflowing = Atomic<Bool>(false)
    let active = Atomic<Bool>(true)

    init(pattern: RoutePattern, observer: any ContentObserver, limit: Int, inline: Bool) {
        self.pattern = pattern
        self.observer = observer
        self.limit = limit
        self.inline = inline
    }

    /// Reserves room for up to `count` changes in the backlog; returns how many fit.
    func admit(_ count: Int) -> Int {
        var current = pending.load(ordering: .relaxed)
        while true {
            let room = limit == Int.max ? count : max(0, min(count, limit - current))
            if room == 0 { return 0 }
            let (exchanged, actual) = pending.compareExchange(
                expected: current,
                desired: current + room,
                ordering: .relaxed
            )
            if exchanged { return room }
            current = actual
        }
    }

    func deliver(_ changes: [ContentChange]) {
        for change in changes where active.load(ordering: .acquiring) {
            observer.contentDidChange(change)
        }
        pending.subtract(changes.count, ordering: .relaxed)
        overflowing.store(false, ordering: .relaxed)
    }
}
