import Dispatch
import LonglinkBench
import LonglinkCommands
import LonglinkServer
import LonglinkGateway
import Synchronization
import LonglinkTestSupport
import Testing

extension BenchEndToEnd {
    @Suite("bench --source-addresses", .ownThreads)
    struct SourceAddressesEndToEndTests {
        @Test("--source-addresses parses N, a range and a list, and refuses anything else")
        func parsing() throws {
            #expect(try BenchParameters.parseSourceAddresses("3") == ["127.0.0.1", "127.0.0.2", "127.0.0.3"])
            #expect(try BenchParameters.parseSourceAddresses("127.0.0.5-127.0.0.7") == ["127.0.0.5", "127.0.0.6", "127.0.0.7"])
            #expect(try BenchParameters.parseSourceAddresses("127.0.0.9, 127.0.1.1") == ["127.0.0.9", "127.0.1.1"])
            for bad in ["0", "255", "127.0.0.7-127.0.0.5", "127.0.0.1-127.0.1.2", "127.0.0", "a,b", "127.0.0.300"] {
                #expect(throws: BenchError.self, "\(bad)") { try BenchParameters.parseSourceAddresses(bad) }
            }
        }

        @Test("idle --source-addresses 4: the gateway sees its connections come from four loopback addresses")
        func gatewaySeesSeveralPeers() throws {
            let gateway = try TestGateway()
            let seen = Mutex<Set<String>>([])
            let server = gateway.running.gateway
            // While the connections idle (after the "idle subscribed connections" progress line), ask the gateway
            // where its connections come from.
            let control = BenchControl { line in
                guard line.contains("idle subscribed connections") else { return }
                let done = DispatchSemaphore(value: 0)
                server.inspect { inspection in
                    let hosts = inspection.connections.map { info in
                        String(info.address[..<(info.address.lastIndex(of: ":") ?? info.address.endIndex)])
                    }
                    seen.withLock { $0.formUnion(hosts) }
                    done.signal()
                }
                _ = done.wait(timeout: .now() + 5)
            }
            let report = try LonglinkBench.run(
                BenchParameters(
                    scenario: .idle,
                    server: gateway.server,
                    routes: 4,
                    connections: 40,
                    duration: 0.5,
                    timeout: 20,
                    sourceAddresses: try BenchParameters.parseSourceAddresses("4")
                ),
                command: "test",
                control: control
            )
            let run = try #require(report.runs.first)
            #expect(run.figure("subscribed") == 40, "\(run.failures)")
            #expect(run.figure("source_addresses") == 4)
            #expect(run.figure("source_addresses_used") == 4)
            #expect(run.figure("source_fallovers") == 0)
            #expect(seen.withLock { $0 } == ["127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4"])
            #expect(report.notes.contains { $0.contains("4 of 4 used") }, "\(report.notes)")
        }

        @Test("a source address this host does not have (EADDRNOTAVAIL) falls over to the next one")
        func fallsOverOnUnavailableAddress() throws {
            let gateway = try TestGateway()
            // 192.0.2.1 (TEST-NET-1) is never a local address: binding it fails with EADDRNOTAVAIL.
            let report = try LonglinkBench.run(
                BenchParameters(
                    scenario: .connect,
                    server: gateway.server,
                    connections: 20,
                    timeout: 20,
                    sourceAddresses: ["192.0.2.1", "127.0.0.3"]
                ),
                command: "test"
            )
            let run = try #require(report.runs.first)
            #expect(run.figure("connected") == 20, "\(run.failures)")
            #expect(run.figure("source_addresses_used") == 1)
            #expect(run.figure("source_fallovers") == 10)
        }

        @Test("connect --source-addresses --workers 2 passes the addresses on to the workers")
        func workersUseTheSources() throws {
            let executable = try #require(longlinkExecutable())
            let gateway = try TestGateway()
            let report = try LonglinkBench.run(
                BenchParameters(
                    scenario: .connect,
                    server: gateway.server,
                    connections: 30,
                    timeout: 20,
                    workers: 2,
                    sourceAddresses: ["127.0.0.1", "127.0.0.2", "127.0.0.3"]
                ),
                command: "test",
                executable: executable
            )
            let run = try #require(report.runs.first)
            #expect(run.figure("connected") == 30, "\(run.failures)")
            #expect(run.figure("source_addresses_used") == 3)
        }
    }
}
