import Synchronization

/// Adapts a delegate onto `ContentObserver`, holding it weakly: registering a delegate does not keep it alive,
/// and once it is gone the registry drops the registration.
public final class DelegateObserver: ContentObserver {
    /// The delegate, nil once it was deallocated.
    public weak let delegate: (any ContentObserver)?

    /// Wraps `delegate` without retaining it.
    public init(_ delegate: any ContentObserver) { self.delegate = delegate }

    public func contentDidChange(_ change: ContentChange) { delegate?.contentDidChange(change) }

    /// Whether the delegate is gone.
    public var isReleased: Bool { delegate == nil }
}

/// Adapts a closure onto `ContentObserver`. A throwing closure's error is caught, counted and handed to
/// `onError`; it never reaches the Store.
public final class BlockObserver: ContentObserver {
    private let block: @Sendable (ContentChange) throws -> Void
    private let onError: (@Sendable (any Error, ContentChange) -> Void)?
    private let errors = Atomic<Int>(0)

    /// Wraps `block`; `onError` is told about each error it throws.
    public init(
        _ block: @escaping @Sendable (ContentChange) throws -> Void,
        onError: (@Sendable (any Error, ContentChange) -> Void)? = nil
    ) {
        self.block = block
        self.onError = onError
    }

    public func contentDidChange(_ change: ContentChange) {
        do {
            try block(change)
        } catch {
            errors.add(1, ordering: .relaxed)
            onError?(error, change)
        }
    }

    /// How many calls of the closure threw.
    public var errorCount: Int { errors.load(ordering: .relaxed) }
}

/// Feeds an `AsyncStream` (see `ObserverRegistry.changes(_:bufferingNewest:)`): yielding never blocks; when the
/// consumer falls behind, the stream keeps the newest `limit` changes and drops older ones.
final class StreamObserver: ContentObserver {
    let continuation: AsyncStream<ContentChange>.Continuation

    init(_ continuation: AsyncStream<ContentChange>.Continuation) { self.continuation = continuation }

    func contentDidChange(_ change: ContentChange) { continuation.yield(change) }
}

/// Keeps an observation alive: `cancel()` (or releasing the token) stops it. Keep it as long as you want
/// notifications; an observation whose token is discarded stops at once.
public final class ObservationToken: Sendable {
    private let onCancel: Mutex<(@Sendable () -> Void)?>

    /// A token that runs `onCancel` once, on the first `cancel()` or at deinit.
    public init(onCancel: @escaping @Sendable () -> Void) { self.onCancel = Mutex(onCancel) }

    /// Stops the observation. Safe to call more than once and from any thread; a delivery already running
    /// finishes, no new one starts.
    public func cancel() {
        let action = onCancel.withLock { action in
            defer { action = nil }
            return action
        }
        action?()
    }

    /// Whether `cancel()` was called.
    public var isCancelled: Bool { onCancel.withLock { $0 == nil } }

    deinit { cancel() }
}
