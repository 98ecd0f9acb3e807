public import LonglinkCore
import Glibc
import LonglinkLoop
import Synchronization

/// Presence shared by every node through Redis.
///
/// Layout: each route with members has a hash `PREFIX:p:<route>` with one field per node (its node id) holding that
/// node's members of the route; each live node keeps `PREFIX:pn:<node>` alive with `SET … PX ttl`, refreshed every
/// `ttl / 3`. A read takes the hash and keeps only the fields of live nodes (one Lua script, which also deletes
/// the fields of dead nodes). So a node killed with `kill -9` drops out of every presence answer at most `ttl`
/// after its last refresh; a clean shutdown deletes its fields and its key at once.
///
/// Threading: its own one-loop `EventLoopGroup` with one non-blocking `RedisConnection`; `joined`/`left` update a
/// `LocalPresence` of this node (under its lock) and mark the route dirty, and the loop writes dirty routes every
/// `flushInterval` (one `HSET`/`HDEL` per route, pipelined). While Redis is unreachable, reads fail with
/// `.unavailable`; after a reconnect every route is written again.
public final class RedisPresence: PresenceStore {
    /// Where Redis is and how entries expire.
    public typealias Configuration = RedisPresenceConfiguration<RedisAddress>

    /// The configuration.
    public let configuration: Configuration
    public var countsOnlyAbove: Int { configuration.countsOnlyAbove }
    let local: LocalPresence
    let dirty = DirtyRoutes()
    /// Where other nodes' join/leave events go.
    let remoteHandler = Mutex<(@Sendable (PresenceEvent) -> Void)?>(nil)
    private let group: EventLoopGroup
    /// The session on the presence loop: made and bound by the loop's first job (posted by `init`), so every later
    /// job finds it (until `shutdown` lets go of it, or the loop finished).
    private let session: LoopBound<RedisPresenceSession>
    private let stopped = Atomic<Bool>(false)

    /// Starts the loop and connects (retrying in the background).
    public init(configuration: Configuration) throws(PresenceError) {
        self.configuration = configuration
        local = LocalPresence(countsOnlyAbove: configuration.countsOnlyAbove)
        do {
            group = try EventLoopGroup(numberOfThreads: 1)
        } catch {
            throw .unavailable("cannot start the Redis presence loop: \(error)")
        }
        session = LoopBound(loop: group.loops[0])
        let configuration = self.configuration
        session.loop.execute { [local, dirty, session, self] context in
            let made = RedisPresenceSession(
                configuration: configuration, local: local, dirty: dirty, context: context,
                remote: { [weak self] event in self?.remoteHandler.withLock { $0 }?(event) }
            )
            session.bind(made, on: context)
            made.connect()
        }
    }

    public func joined(_ route: Route, _ member: PresenceMember) {
        local.joined(route, member)
        markDirty(route)
        announce(route, joined: true, member)
    }

    public func left(_ route: Route, connectionID: String) {
        let member = local.members(of: route).first { $0.connectionID == connectionID }
        local.left(route, connectionID: connectionID)
        markDirty(route)
        if let member { announce(route, joined: false, member) }
    }

    /// Publishes a join/leave for the other nodes' subscribers that asked for events (one pipelined PUBLISH;
    /// none over the counts-only threshold).
    private func announce(_ route: Route, joined: Bool, _ member: PresenceMember) {
        guard local.localCount(of: route) <= configuration.countsOnlyAbove else { return }
        session.execute { $0.publish(route, joined: joined, member) }
    }

    public func deliverRemoteEvents(to handler: @escaping @Sendable (PresenceEvent) -> Void) {
        remoteHandler.withLock { $0 = handler }
    }

    public func watchEvents(_ route: Route) {
        session.execute { $0.watch(route) }
    }

    public func unwatchEvents(_ route: Route) {
        session.execute { $0.unwatch(route) }
    }

    public func localCount(of route: Route) -> Int { local.localCount(of: route) }

    public func presence(of route: Route, completion: @escaping @Sendable (Result<[PresenceMember], PresenceError>) -> Void) {
        let posted = session.loop.execute { [session] _ in
            guard let session = session.object else { return completion(.failure(.unavailable("presence is shut down"))) }
            session.read(route, completion: completion)
        }
        if !posted { completion(.failure(.unavailable("presence is shut down"))) }
    }

    /// Deletes this node's entries and its live key (waiting up to a second for Redis), then stops the loop.
    public func shutdown() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let done = Atomic<Bool>(false)
        let posted = session.loop.execute { [session] _ in
            guard let session = session.object else { return done.store(true, ordering: .releasing) }
            session.removeAll { done.store(true, ordering: .releasing) }
        }
        let deadline = ContinuousClock.now + .seconds(1)
        while posted && !done.load(ordering: .acquiring) && ContinuousClock.now < deadline {
            usleep(1_000)
        }
        session.loop.execute { [session] _ in
            session.object?.close()
            session.unbind()
        }
        group.shutdownGracefully()
    }

    private func markDirty(_ route: Route) {
        let schedule = dirty.state.withLock { state -> Bool in
            state.routes.insert(route)
            guard !state.scheduled else { return false }
            state.scheduled = true
            return true
        }
        guard schedule else { return }
        let interval = configuration.flushInterval
        session.loop.execute { [session] context in
            context.schedule(after: interval) { session.object?.flush() }
        }
    }
}

/// Routes whose presence changed since the last write, and whether a write is scheduled.
final class DirtyRoutes: Sendable {
    let state = Mutex<(routes: Set<Route>, scheduled: Bool)>(([], false))
}
