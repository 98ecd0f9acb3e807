import LonglinkCore
import LonglinkRedis
import LonglinkTestSupport
import Testing

extension BrokerContractFactory {
    /// `RedisBroker` nodes on `server` with the channel scheme `channels`; `dropConnections` kills their
    /// subscribed connections with `CLIENT KILL TYPE pubsub`.
    static func redis(_ server: RedisServer, channels: RedisChannelScheme) -> BrokerContractFactory {
        let address = RedisAddress(host: "127.0.0.1", port: server.port)
        let port = server.port
        let node: @Sendable () throws -> any Broker = { try RedisBroker(configuration: .init(address: address, channels: channels)) }
        return BrokerContractFactory(
            name: "redis \(channels)",
            networked: true,
            node: node,
            dropConnections: { _ = try RESPTestClient(port: port).command(["CLIENT", "KILL", "TYPE", "pubsub"]) },
            make: { (try node(), try node()) }
        )
    }
}

@Suite("RedisBroker contract against a real redis-server", .ownThreads)
struct RedisBrokerContractTests {
    @Test("keeps the Broker contract with a channel per route", arguments: BrokerContract.checks + BrokerContract.networkedChecks)
    func perRoute(_ check: BrokerContractCheck) throws {
        let server = try RedisServer()
        defer { server.stop() }
        try check.run(.redis(server, channels: .perRoute))
    }

    @Test("keeps the Broker contract with sharded channels", arguments: BrokerContract.checks + BrokerContract.networkedChecks)
    func sharded(_ check: BrokerContractCheck) throws {
        let server = try RedisServer()
        defer { server.stop() }
        try check.run(.redis(server, channels: .sharded(4)))
    }

    @Test("each networked check fails on brokers with the fault it is there to catch", arguments: BrokerContract.networkedFaultCases)
    func catchesItsFault(_ check: BrokerContractCheck, _ fault: BrokerFault) throws {
        let server = try RedisServer()
        defer { server.stop() }
        let broken = BrokerContractFactory.redis(server, channels: .perRoute).broken(by: fault)
        withKnownIssue("a RedisBroker that \(fault) must fail this check") { try check.run(broken) }
    }
}
