import LonglinkCore
import LonglinkLoop

/// Presence on the client's loop: `presence` requests with their replies, and join/leave events.
extension ClientDriver {
    /// Sends a `presence` request for `route` (waiting up to 30 s for a connection) and completes with the reply.
    func presence(of route: Route, completion: @escaping @Sendable (Result<PresenceReply, ClientError>) -> Void) {
        guard !closed else { return completion(.failure(.closed)) }
        guard isConnected else {
            context.schedule(after: .milliseconds(20)) { [weak self] in
                guard let self else { return completion(.failure(.closed)) }
                if self.nowMillis - self.attemptStartedMillis > 30_000 { return completion(.failure(.timeout)) }
                self.presence(of: route, completion: completion)
            }
            return
        }
        let id = session.makeRequestID()
        pendingPresence[id] = completion
        send(.presence(PresenceRequest(requestID: id, route: route.text)))
    }

    /// Answers a waiting presence request, or hands a presence event to the app; false for other frames.
    func interceptPresence(_ frame: ServerFrame) -> Bool {
        switch frame {
        case .presenceReply(let reply):
            pendingPresence.removeValue(forKey: reply.requestID)?(.success(reply))
            return true
        case .presenceEvent(let event):
            shared.reportPresenceEvent(event)
            return true
        case .error(let error):
            guard let completion = pendingPresence.removeValue(forKey: error.requestID) else { return false }
            completion(.failure(.refused(error)))
            return true
        default:
            return false
        }
    }
}
