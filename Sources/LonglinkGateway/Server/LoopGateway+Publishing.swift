import LonglinkCore
import LonglinkLoop
import Synchronization

/// Publishing on one loop: changes go to the Store queued, their results come back as one job per batch.
extension LoopGateway {
    /// Queues `change` for the Store (committed before this loop sleeps). The result is counted and, if asked,
    /// watched for receipts on the committing thread, then collected in `publishResults`; the first result of a
    /// batch posts the job that answers them all (`completePublishes`).
    func publish(_ change: OrderChange, from connection: Connection, requestID: UInt32, wantsReceipts: Bool) {
        let loop = context.eventLoop
        let connectionID = connection.id
        let shared = self.shared
        let results = publishResults
        let bound = self.bound
        let started = MonotonicClock.nanoseconds()
        storeWorkQueued = true
        connection.pendingPublishes += 1
        shared.store.applyQueued(change) { result in
            shared.counters.storeApplyLatency.observe(MonotonicClock.nanoseconds() &- started)
            switch result {
            case .success(let applied):
                shared.counters.publishesApplied.add(1, ordering: .relaxed)
                if wantsReceipts && !applied.deduplicated {
                    shared.receipts.watch(
                        applied.record.route,
                        applied.record.position,
                        publisherLoop: loop,
                        connection: connectionID,
                        nowMillis: shared.clock.nowMillis()
                    )
                }
            case .failure(let error):
                shared.counters.publishesRefused.add(1, ordering: .relaxed)
                shared.counters.recordPublishRefused(error.code)
                if error.code == .unavailable { shared.counters.storeErrors.add(1, ordering: .relaxed) }
            }
            let completed = PublishResults.Completed(connectionID: connectionID, requestID: requestID, result: result)
            if results.add(completed) {
                loop.execute { _ in bound.object?.completePublishes() }
            }
        }
    }

    /// Answers every publish completed since the last batch, in completion order (closed connections skipped).
    func completePublishes() {
        publishResults.take(into: &completedPublishes)
        for completed in completedPublishes {
            guard let connection = connections[completed.connectionID], !connection.isClosed else { continue }
            connection.pendingPublishes -= 1
            if case .success(let applied) = completed.result {
                connection.sendPublishAccepted(requestID: completed.requestID, applied: applied)
            } else if let frame = connection.peer.publishResult(requestID: completed.requestID, result: completed.result) {
                connection.send(frame)
            }
        }
        completedPublishes.removeAllKeepingStorage()
    }

    func acknowledged(_ route: Route, offset: UInt64, by connection: Connection) {
        let receipts = shared.receipts.acknowledged(route, offset: offset, subscriberID: connection.clientID, nowMillis: wallMillis)
        for (loop, connectionID, receipt) in receipts {
            loop.execute { context in
                guard let gateway = context.attachment(LoopGateway.self),
                    let publisher = gateway.connections[connectionID], !publisher.isClosed
                else { return }
                publisher.send(.deliveryReceipt(receipt))
            }
        }
    }
}
