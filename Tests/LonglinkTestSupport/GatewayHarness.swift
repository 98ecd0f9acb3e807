import Foundation
public import LonglinkClient
public import LonglinkServer
public import LonglinkCore
public import LonglinkGateway
public import LonglinkLoop
import LonglinkOperations
public import LonglinkStores

/// Admin requests carry this token; the development authorizer admits any token as admin.
public let adminAuth = [("Authorization", "Bearer dev-admin-token")]

/// A real gateway in this process on a free loopback port: the same composition `longlink serve` runs
/// (StoreWriter + store + LocalBroker + Gateway), with test-sized timings.
public final class GatewayHarness {
    /// The gateway and what runs with it.
    public let running: RunningGateway
    /// The gateway's port.
    public var port: Int { running.gateway.port }

    public init(
        store: StoreSpecification = .memory,
        port: Int = 0,
        loops: Int = 2,
        pingMillis: UInt64 = 25_000,
        pongMillis: UInt64 = 10_000,
        minPingMillis: UInt64 = 0,
        maxPingMillis: UInt64 = 0,
        handshakeMillis: UInt64 = 10_000,
        outboundLimit: Int = 1 << 20,
        slowPolicy: GatewayConfiguration.SlowConsumerPolicy = .disconnect,
        drainPeriod: Duration = .milliseconds(300),
        maxConnections: Int = 19_000,
        socketSendBuffer: Int? = nil,
        flush: FlushMode = .ring,
        operations: Bool = false
    ) throws {
        let peer = PeerSettings(
            nodeID: "test-node",
            pingIntervalMillis: pingMillis,
            pongTimeoutMillis: pongMillis,
            minPingIntervalMillis: minPingMillis,
            maxPingIntervalMillis: maxPingMillis,
            handshakeTimeoutMillis: handshakeMillis
        )
        running = try RunningGateway.start(
            gateway: GatewayConfiguration(
                host: "127.0.0.1",
                port: port,
                loopCount: loops,
                peer: peer,
                maxConnections: maxConnections,
                outboundLimit: outboundLimit,
                slowPolicy: slowPolicy,
                drainPeriod: drainPeriod,
                socketSendBuffer: socketSendBuffer,
                flush: flush
            ),
            store: store,
            operationsListen: operations ? HostPort(host: "127.0.0.1", port: 0) : nil
        )
    }

    /// The operations listener's port (start with `operations: true`).
    public var adminPort: Int { running.admin?.port ?? 0 }

    /// A client of this gateway; `backend` picks its selector (the client suite runs on epoll and on poll).
    public func client(
        backend: SelectorBackend = .platformDefault,
        _ configure: (inout ClientConfiguration) -> Void = { _ in }
    ) throws -> LonglinkClient {
        var configuration = ClientConfiguration(
            host: "127.0.0.1",
            port: port,
            connectTimeout: .seconds(5),
            publishTimeout: .seconds(30),
            selectorBackend: backend
        )
        configure(&configuration)
        return try LonglinkClient(configuration: configuration)
    }

    /// Applies a change straight through the Store's writer (as a backend publish would).
    @discardableResult
    public func apply(_ change: OrderChange) async throws -> AppliedChange {
        try await running.writer.apply(change)
    }

    /// Drains and stops the gateway.
    public func stop() { running.drainAndStop() }
}

/// `count` legal taxi changes for one order: created, dispatching, then driver_assigned ⇄ dispatching
/// (a driver taking the order and dropping out, again and again) as long as needed.
public func taxiChanges(_ id: String, count: Int) -> [OrderChange] {
    let order = OrderID(id)!
    var changes: [OrderChange] = []
    for index in 0..<count {
        switch index {
        case 0: changes.append(OrderChange(orderID: order, line: .taxi, targetState: "created"))
        case _ where index % 2 == 1: changes.append(OrderChange(orderID: order, line: .taxi, targetState: "dispatching"))
        default:
            changes.append(
                OrderChange(
                    orderID: order,
                    line: .taxi,
                    targetState: "driver_assigned",
                    fields: OrderFields(driverID: "d-\(index)", etaSeconds: UInt32(index))
                )
            )
        }
    }
    return changes
}
