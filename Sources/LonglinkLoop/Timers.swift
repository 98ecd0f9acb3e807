/// Identifies a scheduled timer on one loop, for `LoopContext.cancel(_:)`.
public struct TimerID: Hashable, Sendable {
    let rawValue: UInt64
}

/// The loop's timers: a binary min-heap ordered by (deadline, scheduling order), so timers due in the same
/// iteration run in deadline order and ties run first-scheduled-first.
///
/// Cancellation is lazy: `cancel` forgets the callback and the heap entry is skipped when it surfaces. When more
/// than half of the heap is cancelled entries (connections re-arming idle timers), it is rebuilt.
/// Loop-confined; `LoopContext` drives one timerfd from `nextDeadline`.
struct TimerHeap {
    private struct Entry {
        var deadline: UInt64
        var id: UInt64
    }

    private struct Timer {
        var body: () -> Void
        /// Nanoseconds between runs for a repeating timer, nil for a one-shot.
        var interval: UInt64?
    }

    private var heap: [Entry] = []
    private var timers: [UInt64: Timer] = [:]
    private var nextID: UInt64 = 1
    /// The id of the heap's top entry when `nextDeadline` last found it live (0: none). The loop asks for the next
    /// deadline every iteration and the top rarely changes between two asks, so the answer skips the lookup of
    /// its timer; a cancel of that timer clears it.
    private var liveTop: UInt64 = 0

    /// Number of live (not cancelled, not yet fired) timers.
    var count: Int { timers.count }

    /// The earliest deadline of a live timer, in monotonic nanoseconds.
    mutating func nextDeadline() -> UInt64? {
        while let top = heap.first {
            if top.id == liveTop { return top.deadline }
            if timers.index(forKey: top.id) != nil {
                liveTop = top.id
                return top.deadline
            }
            popTop()
        }
        return nil
    }

    /// Adds a timer; `interval` makes it repeat.
    mutating func schedule(deadline: UInt64, interval: UInt64?, _ body: @escaping () -> Void) -> TimerID {
        let id = nextID
        nextID &+= 1
        timers[id] = Timer(body: body, interval: interval)
        push(Entry(deadline: deadline, id: id))
        return TimerID(rawValue: id)
    }

    /// Forgets a timer; returns false if it already fired (one-shot) or was cancelled.
    @discardableResult
    mutating func cancel(_ timer: TimerID) -> Bool {
        guard timers.removeValue(forKey: timer.rawValue) != nil else { return false }
        if timer.rawValue == liveTop { liveTop = 0 }
        if heap.count > 64 && heap.count > 2 * timers.count { compact() }
        return true
    }

    /// Removes the earliest timer due at or before `now` and returns its callback (a repeating timer is put back,
    /// due no earlier than `now + 1`). The caller runs the callback outside this struct's access, because a callback
    /// may schedule or cancel timers. Looping until nil runs due timers in deadline order; timers scheduled by these
    /// callbacks are due after `now`, so they wait for the next iteration: a zero-delay timer cannot starve I/O.
    mutating func popExpired(now: UInt64) -> (() -> Void)? {
        while let top = heap.first, top.deadline <= now {
            popTop()
            guard let timer = timers[top.id] else { continue }
            if let interval = timer.interval {
                push(Entry(deadline: Swift.max(top.deadline &+ interval, now &+ 1), id: top.id))
            } else {
                timers.removeValue(forKey: top.id)
                if top.id == liveTop { liveTop = 0 }
            }
            return timer.body
        }
        return nil
    }

    private mutating func compact() {
        heap.removeAll { timers[$0.id] == nil }
        for index in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(index) }
    }

    private static func less(_ a: Entry, _ b: Entry) -> Bool {
        a.deadline != b.deadline ? a.deadline < b.deadline : a.id < b.id
    }

    private mutating func push(_ entry: Entry) {
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.less(heap[child], heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func popTop() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        siftDown(0)
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < heap.count else { return }
            var smallest = left
            if left + 1 < heap.count && Self.less(heap[left + 1], heap[left]) { smallest = left + 1 }
            guard Self.less(heap[smallest], heap[parent]) else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
