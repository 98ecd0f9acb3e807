import Glibc
import LonglinkCore

extension LoopContext {
    /// One iteration of the loop, shaped like Redis's `aeProcessEvents`. The order is the design:
    func runOnce() throws(IOError) {
        // 1. Before sleeping, flush what the previous iteration queued (Redis's beforeSleep writes replies
        //    directly): most writes complete here, so EPOLLOUT is only ever requested after a short write.
        //    Indexing (not for-in) lets a hook add hooks.
        var hook = 0
        while hook < beforeSleepHooks.count {
            let run = beforeSleepHooks[hook]  // copied out: the hook may add hooks
            run()
            hook += 1
        }

        // 2. Sleep. On epoll no timeout arithmetic: the timerfd is armed at the earliest timer deadline and the
        //    inbox's eventfd is written by other threads, so both wake epoll_wait like any other fd (the poll
        //    backend sleeps until the earliest deadline instead, and its inbox writes a self-pipe). If a hook asked
        //    to stop, or jobs were enqueued locally (by the last step 5, or posted to the inbox from this thread,
        //    which writes no eventfd), just poll.
        let timeout: CInt = isStopped || !localJobs.isEmpty || eventLoop.inbox.hasJobs ? 0 : sleepTimeout()
        // Load metrics: an iteration's busy time runs from the last wake-up (`now`: the previous iteration's
        // handlers, timers and jobs, or the loop's start) to this sleep (the hooks above): one clock read here.
        if !iterationObservers.isEmpty {
            let busy = MonotonicClock.nanoseconds() &- now
            for observer in iterationObservers { observer(busy) }
        }
        try selector.wait(timeoutMillis: timeout) { fd, generation, fired in
            // 3. Dispatch in the order epoll reported. The loop's own fds (generation 0) only need their readiness
            //    cleared; their work happens in steps 4 and 5. A handler gets read and write in one call and
            //    handles read first; events for registrations removed or replaced earlier in this batch are dropped.
            if generation == 0 {
                if let timerFD, fd == timerFD.fd {
                    timerFD.acknowledge()
                    armedDeadline = nil
                } else {
                    eventLoop.inbox.acknowledge()
                }
                return
            }
            deliver(fd: fd, generation: generation, fired: fired)
        }
        now = MonotonicClock.nanoseconds()

        // 4. Timers due by `now`, in deadline order (those they schedule wait for the next iteration), then re-arm
        //    the timerfd only if the earliest deadline is not already covered.
        while let timer = timers.popExpired(now: now) { timer() }
        armTimerIfNeeded()

        // 5. Jobs from other threads last: they see the state after this iteration's I/O and timers, and writes
        //    they queue are flushed by step 1 right away. The batch array is swapped, not reallocated.
        //    Then the loop-local jobs (`enqueue`); those they enqueue wait for the next iteration.
        runPostedJobs()
        swap(&localJobs, &localBatch)
        for job in localBatch { job() }
        localBatch.removeAllKeepingStorage()
    }

    /// Runs the jobs waiting in the inbox now (step 5 does this every iteration). For a before-sleep hook whose work
    /// posted jobs to this loop from this loop's thread (a Store commit on the loop: its deliveries and publish
    /// results): run here, before the flush, they are written in this iteration instead of costing another one
    /// (a poll, the timers and the hooks again). Jobs these jobs post wait for step 5.
    public func runPostedJobs() {
        precondition(eventLoop.inEventLoop, "runPostedJobs off the loop's thread")
        eventLoop.inbox.take(into: &jobs)
        guard !jobs.isEmpty else { return }
        for job in jobs { job(self) }
        jobs.removeAllKeepingStorage()
    }

    /// Runs after the last iteration: refuses new jobs and runs the ones already queued, so a `stop()` posted
    /// after other work does not drop that work.
    func finish() {
        eventLoop.inbox.close(into: &jobs)
        for job in jobs { job(self) }
        jobs.removeAll()
        for job in localJobs { job() }
        localJobs.removeAll()
        detachAll()
    }
}
