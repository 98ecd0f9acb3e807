import LonglinkBench
import LonglinkCommands
import LonglinkServer
import LonglinkGateway
import LonglinkRedis
import LonglinkStores
import LonglinkTestSupport
import Testing

extension BenchEndToEnd {
    @Suite("bench fanout across nodes", .ownThreads)
    struct CrossNodeFanoutTests {
        @Test("--publish-server is parsed into the parameters and needs --server and the fanout scenario")
        func publishServerValidation() throws {
            var parameters = BenchParameters(scenario: .fanout, server: "127.0.0.1:7000", publishServer: "127.0.0.1:7001")
            #expect(parameters.publishServer == "127.0.0.1:7001")
            try parameters.validate()

            parameters.server = nil
            #expect(throws: BenchError.self) { try parameters.validate() }

            let idle = BenchParameters(scenario: .idle, server: "127.0.0.1:7000", publishServer: "127.0.0.1:7001")
            #expect(throws: BenchError.self) { try idle.validate() }

            #expect(BenchParameters(scenario: .fanout).publishServer == nil)
        }

        @Test("the command line refuses --publish-server without --server, and a malformed address")
        func publishServerCommandLine() async throws {
            let (withoutServer, _, io) = try await runBench(["fanout", "--publish-server", "127.0.0.1:7001"])
            #expect(withoutServer != 0)
            #expect(io.capturedErr.contains("--publish-server"), "\(io.capturedErr)")

            let gateway = try TestGateway()
            let (malformed, _, malformedIO) = try await runBench([
                "fanout", "--server", gateway.server, "--publish-server", "no-port", "--subscribers", "1", "--messages", "1",
            ])
            #expect(malformed != 0)
            #expect(malformedIO.capturedErr.contains("--publish-server expects HOST:PORT"), "\(malformedIO.capturedErr)")
        }

        @Test("two real nodes on one real redis-server: published on B, every delivery arrives on A exactly once")
        func crossNode() async throws {
            let redis = try RedisServer()
            defer { redis.stop() }
            let nodeA = try startRedisNode("bench-a", redisPort: redis.port)
            defer { nodeA.drainAndStop() }
            let nodeB = try startRedisNode("bench-b", redisPort: redis.port)
            defer { nodeB.drainAndStop() }
            #expect(nodeA.gateway.port != nodeB.gateway.port)

            let (code, report, io) = try await runBench([
                "fanout", "--server", "127.0.0.1:\(nodeA.gateway.port)", "--publish-server", "127.0.0.1:\(nodeB.gateway.port)",
                "--subscribers", "40", "--routes", "8", "--messages", "200", "--duration", "20s", "--timeout", "20s",
            ])
            #expect(code == 0, "\(io.capturedErr)")
            let run = try #require(runs(report).first)
            #expect((run["label"] as? String)?.contains("publisher→") == true)
            #expect(figure(run, "subscribed") == 40)
            #expect(figure(run, "acknowledged") == 200)
            #expect(figure(run, "expected_deliveries") == 1_000)
            #expect(figure(run, "deliveries") == 1_000)
            #expect(figure(run, "lost") == 0)
            #expect(figure(run, "duplicates") == 0)
            #expect(figure(run, "gaps") == 0)
            // Every publish was applied on B and every push sent by A: each delivery crossed Redis.
            let a = nodeA.gateway.counters.snapshot
            let b = nodeB.gateway.counters.snapshot
            #expect(a.publishesApplied == 0)
            #expect(b.publishesApplied >= 200)
            #expect(a.pushes >= 1_000)
            #expect(b.pushes == 0)
        }
    }
}

/// A gateway node in this process whose store and broker are the Redis on `redisPort`.
private func startRedisNode(_ name: String, redisPort: Int) throws -> RunningGateway {
    try RunningGateway.start(
        gateway: GatewayConfiguration(
            host: "127.0.0.1",
            port: 0,
            loopCount: 2,
            peer: PeerSettings(nodeID: name, maxSubscriptions: 1024),
            outboundLimit: 64 << 20,
            drainPeriod: .milliseconds(200)
        ),
        store: .redis(host: "127.0.0.1", port: redisPort, database: 0),
        broker: .redis(RedisAddress(host: "127.0.0.1", port: redisPort))
    )
}
