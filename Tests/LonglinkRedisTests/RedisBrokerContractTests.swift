import LonglinkCore
import LonglinkRedis
import LonglinkTestSupport
import Testing

@Suite("RedisBroker contract against a real redis-server")
struct RedisBrokerContractTests {
    @Test("keeps the Broker contract", arguments: BrokerContract.checks)
    func contract(_ check: BrokerContractCheck) throws {
        let server = try RedisServer()
        defer { server.stop() }
        let address = RedisAddress(host: "127.0.0.1", port: server.port)
        try check.run(BrokerContractFactory(name: "redis", networked: true) {
            (try RedisBroker(configuration: .init(address: address)), try RedisBroker(configuration: .init(address: address)))
        })
    }
}
