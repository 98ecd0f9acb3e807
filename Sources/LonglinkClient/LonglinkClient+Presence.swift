public import LonglinkCore
import LonglinkLoop

/// Presence: who is subscribed to a route now, and join/leave events.
extension LonglinkClient {
    /// Who is subscribed to `route` now, over every node (the token's routes must cover it). Above the server's
    /// counts-only threshold the reply has counts only.
    public func presence(of route: Route) async throws(ClientError) -> PresenceReply {
        let result: Result<PresenceReply, ClientError> = await withCheckedContinuation { continuation in
            let posted = loop.execute { context in
                guard let driver = context.attachment(ClientDriver.self) else {
                    continuation.resume(returning: .failure(.closed))
                    return
                }
                driver.presence(of: route) { continuation.resume(returning: $0) }
            }
            if !posted { continuation.resume(returning: .failure(.closed)) }
        }
        return try result.get()
    }

    /// Subscribes to `route` (kept across reconnects) asking for join/leave events, delivered to `onPresenceEvent`.
    public func subscribe(_ route: Route, presenceEvents: Bool) {
        loop.execute { context in context.attachment(ClientDriver.self)?.want(route, presenceEvents: presenceEvents) }
    }

    /// Calls `handler` (on the client's thread) with the join/leave events of routes subscribed with
    /// `subscribe(_:presenceEvents: true)`.
    public func onPresenceEvent(_ handler: @escaping @Sendable (PresenceEvent) -> Void) { shared.onPresenceEvent(handler) }
}
