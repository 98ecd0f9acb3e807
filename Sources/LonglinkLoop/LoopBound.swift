/// A loop-confined object together with the loop that owns it, for jobs posted from any thread: a job captures the
/// handle (which is `Sendable`) and reaches the object with `object` on that loop, with no lookup by type and no
/// cast (unlike `LoopContext.attachment(_:)`).
///
/// Held strongly until the loop finishes (like an attachment; no weak reference, which would give the object a
/// side table and slow every retain of it); after that `object` is nil.
public final class LoopBound<Object: AnyObject>: Sendable {
    /// The loop the object lives on.
    public let loop: EventLoop
    /// Read and written only on `loop`'s thread (`object` checks; the loop clears it as it finishes), which is
    /// what makes sharing the handle safe.
    private nonisolated(unsafe) var bound: Object?

    /// Binds `object` to the loop of `context`; call on that loop.
    public init(_ object: Object, on context: LoopContext) {
        self.loop = context.eventLoop
        self.bound = object
        context.whenFinished { [self] in self.bound = nil }
    }

    /// The object, nil once its loop finished; only on its loop's thread (in a job posted with `loop.execute`).
    public var object: Object? {
        precondition(loop.inEventLoop, "a loop-bound object was used off its loop")
        return bound
    }
}
