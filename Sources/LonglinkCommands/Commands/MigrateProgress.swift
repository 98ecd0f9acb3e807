import LonglinkStores

/// Shows how far a migration's walks are, on stderr, at most once per `interval` (0: after every page), with the
/// rate since the walk started: `migrate copy: 1500/40000 orders, 1500 copied, 0 extended, 0 replaced, 0 already
/// identical, 2345 orders/s`. Like the bench's progress lines, for runs long enough to wonder about: once a line
/// was shown, the last state of each walk is shown too.
final class MigrateProgress {
    private let io: CommandIO
    private let interval: Duration
    /// When the current walk started (the previous walk's last page, or the start).
    private var started = ContinuousClock.now
    private var lastUpdate = ContinuousClock.now
    private var lastShown: ContinuousClock.Instant?
    private var phase: StoreMigration.Progress.Phase?
    private var pending: StoreMigration.Progress?

    init(io: CommandIO, interval: Duration) {
        self.io = io
        self.interval = interval
    }

    /// Takes the state after a page; prints it when the interval has passed since the last line (or the start).
    func update(_ progress: StoreMigration.Progress) {
        let now = ContinuousClock.now
        if progress.phase != phase {
            finish()
            if phase != nil { started = lastUpdate }
            phase = progress.phase
        }
        lastUpdate = now
        guard now - (lastShown ?? started) >= interval else {
            pending = progress
            return
        }
        show(progress, at: now)
    }

    /// Prints the walk's last state when earlier lines were printed and it was not.
    func finish() {
        guard lastShown != nil, let pending else { return }
        show(pending, at: lastUpdate)
    }

    private func show(_ progress: StoreMigration.Progress, at instant: ContinuousClock.Instant) {
        let elapsed = instant - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let rate = seconds > 0 ? Int(Double(progress.visited) / seconds) : 0
        io.err("migrate \(progress), \(rate) orders/s")
        lastShown = ContinuousClock.now
        pending = nil
    }
}
