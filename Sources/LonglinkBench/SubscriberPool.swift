import LonglinkLoop

/// A benchmark subscriber of any system, as the pool sees it. Loop-confined.
protocol BenchSubscriber: AnyObject {
    /// Whether it could not even start (no socket).
    var failedToStart: Bool { get }
    /// Closes it quietly.
    func close()
}

/// One loop's benchmark subscribers, opened at most `window` at a time so that thousands of simultaneous SYNs do
/// not overflow the server's accept backlog (which would add the kernel's 1 s SYN retry to the measurement).
/// Attached to its loop; the coordinating thread reaches it through `BenchLoops.collect` or `execute`.
final class SubscriberPool {
    /// Makes subscriber `index`; it must call `settled` exactly once, when subscribed or when it failed first.
    typealias Factory = (_ index: Int, _ context: LoopContext, _ settled: @escaping () -> Void) -> any BenchSubscriber

    private(set) var members: [any BenchSubscriber] = []
    private var queue: [Int] = []
    private var next = 0
    private var inProgress = 0
    private let window: Int
    private var factory: Factory?
    private unowned let context: LoopContext

    init(context: LoopContext, window: Int = 128) {
        self.context = context
        self.window = window
    }

    /// The pool of `context`, created on first use.
    static func of(_ context: LoopContext, window: Int = 128) -> SubscriberPool {
        if let pool = context.attachment(SubscriberPool.self) { return pool }
        let pool = SubscriberPool(context: context, window: window)
        context.attach(pool)
        return pool
    }

    /// Opens subscribers `indices` with `factory`.
    func open(_ indices: [Int], factory: @escaping Factory) {
        queue += indices
        self.factory = factory
        pump()
    }

    private func pump() {
        while inProgress < window && next < queue.count, let factory {
            let index = queue[next]
            next += 1
            inProgress += 1
            var done = false
            let settled = { [weak self] in
                guard !done else { return }
                done = true
                self?.inProgress -= 1
                self?.context.enqueue { self?.pump() }
            }
            let member = factory(index, context, settled)
            members.append(member)
            if member.failedToStart { settled() }
        }
    }

    /// Closes every member and forgets them.
    func closeAll() {
        let closing = members
        members = []
        queue = []
        next = 0
        inProgress = 0
        factory = nil
        for member in closing { member.close() }
    }
}

@available(*, unavailable)
extension SubscriberPool: Sendable {}
