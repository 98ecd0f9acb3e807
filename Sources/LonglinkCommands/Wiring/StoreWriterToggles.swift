import LonglinkCore
import LonglinkGateway
import LonglinkOperations
import LonglinkStores

extension StoreWriterAccess {
    /// A subscribe to `config://<app>/<name>`: the toggle's current value is the snapshot; a client at the current
    /// position is up to date, one that missed exactly the last change gets it, any other position is `.expired`
    /// (a toggle keeps no history; the snapshot is what counts).
    func readToggleForSubscribe(
        _ route: Route,
        since: StreamPosition?,
        completion: @escaping @Sendable (Result<SubscribeRead, StoreError>) -> Void
    ) {
        toggles.read(app: route.namespace, name: route.key) { result in
            completion(
                result.map { read in
                    guard let toggle = read.toggle else {
                        return SubscribeRead(epoch: read.epoch, snapshot: nil, history: since == nil ? nil : .records([]))
                    }
                    var history: HistoryRead?
                    if let since {
                        let current = toggle.position
                        if since == current {
                            history = .records([])
                        } else if since.epoch == current.epoch && since.offset + 1 == current.offset {
                            history = .records([toggle.record])
                        } else {
                            history = .expired
                        }
                    }
                    return SubscribeRead(epoch: read.epoch, snapshot: toggle.snapshot, history: history)
                }
            )
        }
    }
}
