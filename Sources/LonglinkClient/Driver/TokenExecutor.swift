import LonglinkLoop

/// The thread the app's token provider runs on: one of the client's own, started only when a provider is set.
///
/// The provider is an async closure. Run as a plain `Task` it waits for a thread of the shared cooperative pool,
/// which has one thread per core (two on a small phone or server) and which an app's own blocking work can fill:
/// then a token refresh announced by `token_expiring` arrives after the token expired. As the tasks' preferred
/// executor this thread runs the provider and every continuation inside it, whatever the pool is doing.
final class TokenExecutor: TaskExecutor {
    private let group: EventLoopGroup
    private var loop: EventLoop { group.loops[0] }

    /// `backend`: the client's selector backend (its threads never need epoll on a poll-configured client).
    init(backend: SelectorBackend) throws(IOError) {
        group = try EventLoopGroup(numberOfThreads: 1, backend: backend)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        let posted = loop.execute { _ in job.runSynchronously(on: executor) }
        // After `shutdown` the thread is gone: finish the job where it was resumed rather than leak its task.
        if !posted { job.runSynchronously(on: executor) }
    }

    /// Stops the thread (jobs already queued still run). From the thread itself, it only asks it to stop.
    func shutdown() {
        if loop.inEventLoop { loop.stop() } else { group.shutdownGracefully() }
    }
}
