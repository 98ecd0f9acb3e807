import LonglinkTestSupport
import Foundation
import Glibc
import LonglinkClient
import LonglinkServer
import LonglinkCore
import LonglinkGateway
import LonglinkLoop

/// A secured gateway with one healthy subscriber that must keep its service while the tests attack the
/// gateway: `serviceContinues()` publishes the next change and waits for the healthy client to receive it.
final class HostileFixture {
    let gateway: SecureGateway
    let healthy: LonglinkClient
    private let received = LockedCounter()
    private var observation: ObservationToken?
    private var changes: [OrderChange]
    private var published = 0
    /// Server-side sockets of the gateway once the healthy client is connected (listeners + that one).
    private(set) var baselineSockets = 0

    init(handshakeMillis: UInt64 = 1_500, pingMillis: UInt64 = 25_000, pongMillis: UInt64 = 10_000, admission: AdmissionLimits? = nil) async throws {
        gateway = try SecureGateway(
            handshakeMillis: handshakeMillis,
            pingMillis: pingMillis,
            pongMillis: pongMillis,
            admission: admission ?? AdmissionLimits(connectionsPerSecond: 0, maxConnectionsPerAddress: 0)
        )
        healthy = try gateway.client(token: gateway.token("healthy", routes: ["order://taxi/*"]))
        changes = taxiChanges("healthy", count: 400)
        let received = self.received
        let answered = SubscriptionAnswered(healthy, Route.order(.taxi, OrderID("healthy")!))
        observation = healthy.observe(Route.order(.taxi, OrderID("healthy")!)) { _ in received.add() }
        let ready = await eventually { answered.isAnswered }
        guard ready else { throw FixtureError.notReady }
        // Listeners of every loop plus the healthy connection, read until stable.
        var previous = -1
        while baselineSockets != previous {
            previous = baselineSockets
            try await Task.sleep(for: .milliseconds(20))
            baselineSockets = gatewaySockets()
        }
    }

    /// Publishes one change and waits until the healthy client has it: the gateway still serves.
    func serviceContinues() async throws -> Bool {
        guard published < changes.count else { return true }
        try await gateway.apply(changes[published])
        published += 1
        let target = published
        return await eventually { self.received.value >= target }
    }

    /// Server-side sockets (fds of this process whose local port is one of the gateway's ports).
    func gatewaySockets() -> Int {
        let ports = Set((0...5).map { gateway.running.gateway.port(ofListener: $0) })
        return SocketTable.serverSideDescriptors(localPorts: ports)
    }

    /// Waits until the gateway holds exactly its baseline sockets again (every hostile connection closed).
    func noDescriptorLeak() async -> Bool {
        await eventually(timeout: .seconds(15)) { self.gatewaySockets() == self.baselineSockets }
    }

    func stop() {
        observation?.cancel()
        healthy.close()
        gateway.stop()
    }

    enum FixtureError: Error { case notReady }
}

/// Counts this process's descriptors for sockets whose local port is one of `localPorts` (a gateway's listeners
/// and accepted connections, whatever their TCP state, CLOSE_WAIT included: a descriptor the gateway forgot to
/// close shows here). Each descriptor listed in /proc/self/fd is asked for its own address (`getsockname`), which
/// stays exact while other suites open and close sockets in parallel. Client sockets of the tests have ephemeral
/// local ports and are not counted. A descriptor another suite closes between the listing and the question is
/// skipped: `getsockname` is called directly here, since `Socket.localAddress` treats a bad descriptor as the
/// programming error it is inside the gateway.
enum SocketTable {
    static func serverSideDescriptors(localPorts: Set<Int>) -> Int {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return -1 }
        var count = 0
        for entry in entries {
            guard let fd = CInt(entry),
                let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + entry),
                target.hasPrefix("socket:["),
                let port = localPort(fd)
            else { continue }
            if localPorts.contains(port) { count += 1 }
        }
        return count
    }

    /// The local TCP port of `fd`, or nil when it is not an IPv4/IPv6 socket (or no longer open).
    private static func localPort(_ fd: CInt) -> Int? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let rc = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard rc == 0 else { return nil }
        switch Int32(storage.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &storage) { pointer in
                pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
            }
        case AF_INET6:
            return withUnsafePointer(to: &storage) { pointer in
                pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
            }
        default:
            return nil
        }
    }
}
