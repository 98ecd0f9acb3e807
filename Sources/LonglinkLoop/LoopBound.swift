/// A loop-confined object together with the loop that owns it, for jobs posted from any thread: a job captures the
/// handle (which is `Sendable`) and reaches the object with `object` on that loop, with no lookup by type and no
/// cast (unlike `LoopContext.attachment(_:)`).
///
/// Two ways to make one:
/// - `init(_:on:)` on the loop, when the object exists already;
/// - `init(loop:)` on any thread, before the object exists (it is made later by a job on that loop), then
///   `bind(_:on:)` once, on the loop. Jobs may capture the handle at once; one that runs before the binding finds
///   `object` nil. A job posted with `loop.execute` after the job that binds runs after it (the inbox is FIFO), so
///   such a job always finds the object.
///
/// Held strongly until the loop finishes (like an attachment; no weak reference, which would give the object a
/// side table and slow every retain of it) or until `unbind()`; after that `object` is nil.
///
/// Why sharing the handle is safe: `bound` and `wasBound` are read and written only on `loop`'s thread (`object`,
/// `bind` and `unbind` check it; the loop's finish hook clears `bound` there), except for their initial values,
/// written by `init` before the handle is shared with any other thread. A handle reaches another thread only
/// through something that orders memory (an `execute` job, a `Mutex`, a thread's start), so the loop thread sees
/// those initial values.
public final class LoopBound<Object: AnyObject>: Sendable {
    /// The loop the object lives on.
    public let loop: EventLoop
    /// The object; only on `loop`'s thread (see the type's comment).
    private nonisolated(unsafe) var bound: Object?
    /// Whether an object was ever bound (a handle is bound once); only on `loop`'s thread.
    private nonisolated(unsafe) var wasBound: Bool

    /// Binds `object` to the loop of `context`; call on that loop.
    public init(_ object: Object, on context: LoopContext) {
        self.loop = context.eventLoop
        self.bound = object
        self.wasBound = true
        context.whenFinished { [self] in self.bound = nil }
    }

    /// A handle for an object that `loop` will make later: `object` is nil until `bind(_:on:)` runs there. Callable
    /// from any thread.
    public init(loop: EventLoop) {
        self.loop = loop
        self.bound = nil
        self.wasBound = false
    }

    /// Binds `object` to a handle made with `init(loop:)`; call once, on that loop (`context` is its context). From
    /// then on jobs find `object` until the loop finishes or `unbind()` runs.
    public func bind(_ object: Object, on context: LoopContext) {
        precondition(context.eventLoop === loop && loop.inEventLoop, "a loop-bound handle was bound off its loop")
        precondition(!wasBound, "a loop-bound handle was bound twice")
        wasBound = true
        bound = object
        context.whenFinished { [self] in self.bound = nil }
    }

    /// Lets go of the object before the loop finishes (a component shut down while its loop still runs jobs):
    /// jobs that run after this find `object` nil, as after the loop finished. Only on the loop's thread.
    public func unbind() {
        precondition(loop.inEventLoop, "a loop-bound object was released off its loop")
        bound = nil
    }

    /// Posts `job` to the loop; it runs with the object if one is bound by then (see `object`), and not at all
    /// otherwise. Returns false, dropping the job, once the loop has shut down. For a job that must also act when
    /// the object is gone, post to `loop` and read `object` there.
    @discardableResult
    public func execute(_ job: @escaping @Sendable (Object) -> Void) -> Bool {
        loop.execute { [self] _ in
            guard let object = self.object else { return }
            job(object)
        }
    }

    /// The object: nil before it was bound, after `unbind()` and once its loop finished. Only on its loop's thread
    /// (in a job posted with `loop.execute`).
    public var object: Object? {
        precondition(loop.inEventLoop, "a loop-bound object was used off its loop")
        return bound
    }
}
