import Foundation
import LonglinkBench
import LonglinkCommands
import LonglinkTestSupport
import Testing

extension BenchEndToEnd {
    @Suite("bench profile end to end", .ownThreads)
    struct ProfileEndToEndTests {
        @Test("profile runs the gateway and redis-server under callgrind and derives each per-delivery figure from the two callgrind files")
        func profileBothServers() async throws {
            let executable = try #require(longlinkExecutable(), "the longlink executable is built by `swift build`")
            let directory = NSTemporaryDirectory() + "/longlink-profile-test-\(UInt32.random(in: 0...UInt32.max))"
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let (code, report, io) = try await runBench([
                "profile", "--binary", executable, "--subscribers", "20", "--counts", "60,180", "--profile-dir", directory,
            ])
            #expect(code == 0, "\(io.capturedErr)")
            let all = runs(report)
            #expect(all.map { $0["system"] as? String } == ["longlink", "redis", "longlink", "redis"])
            for (index, run) in all.enumerated() {
                let name = "\(run["system"] ?? "") \(run["label"] ?? "")"
                let subscribersPerPublish = index < 2 ? 1.0 : 20.0  // many routes, then broadcast
                #expect(figure(run, "small_deliveries") == 60 * subscribersPerPublish, "\(name)")
                #expect(figure(run, "large_deliveries") == 180 * subscribersPerPublish, "\(name)")
                #expect(figure(run, "lost") == 0, "\(name)")
                // The figures come from the callgrind files the run names, not from anywhere else.
                let files = try #require(run["files"] as? [String], "\(name)")
                try #require(files.count == 2)
                #expect(files.allSatisfy { $0.hasPrefix(directory) })
                let small = try #require(CallgrindFile.read(files[0])?.instructions, "\(files[0])")
                let large = try #require(CallgrindFile.read(files[1])?.instructions, "\(files[1])")
                #expect(figure(run, "small_instructions") == Double(small))
                #expect(figure(run, "large_instructions") == Double(large))
                let perDelivery = try #require(figure(run, "instructions_per_delivery"), "\(name)")
                let extra = (180 - 60) * subscribersPerPublish
                #expect(abs(perDelivery - (Double(large) - Double(small)) / extra) < 0.01)
                // Heap allocations: the calls to the C allocator in the same two files.
                let smallAllocations = try #require(CallgrindCalls.read(files[0])?.total, "\(files[0])")
                let largeAllocations = try #require(CallgrindCalls.read(files[1])?.total, "\(files[1])")
                #expect(figure(run, "small_allocations") == Double(smallAllocations))
                #expect(figure(run, "large_allocations") == Double(largeAllocations))
                #expect(smallAllocations > 0, "\(name): a server that never allocates is a parser that counts nothing")
                let allocations = try #require(figure(run, "allocations_per_delivery"), "\(name)")
                #expect(abs(allocations - (Double(largeAllocations) - Double(smallAllocations)) / extra) < 0.01)
                // Plausible for any server: more than a few hundred instructions per delivery (a syscall wrapper
                // alone), less than ten million.
                #expect(perDelivery > 200 && perDelivery < 10_000_000, "\(name): \(perDelivery)")
            }
            for run in all where run["system"] as? String == "longlink" {
                #expect((figure(run, "ratio_to_redis") ?? 0) > 0)
            }
            let targets = try #require(report["targets"] as? [[String: Any]])
            #expect(targets.count == 2)
            #expect(io.capturedOut.contains(directory), "the report names where the callgrind files are")
            #expect(io.capturedOut.contains("heap allocations per publish→delivery"), "the notes give the allocations")
        }

        @Test("profile --rounds measures both servers each round and reports the median of the rounds' figures")
        func profileRounds() async throws {
            let executable = try #require(longlinkExecutable(), "the longlink executable is built by `swift build`")
            let directory = NSTemporaryDirectory() + "/longlink-profile-test-\(UInt32.random(in: 0...UInt32.max))"
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let (code, report, io) = try await runBench([
                "profile", "--binary", executable, "--subscribers", "10", "--counts", "40,100", "--workloads", "many-routes",
                "--rounds", "3", "--profile-dir", directory,
            ])
            #expect(code == 0, "\(io.capturedErr)")
            let all = runs(report)
            #expect(all.map { $0["system"] as? String } == ["longlink", "redis"])
            for run in all {
                let name = "\(run["system"] ?? "")"
                #expect(figure(run, "rounds") == 3, "\(name)")
                // Six files, (small, large) per round, each from its own server process.
                let files = try #require(run["files"] as? [String], "\(name)")
                try #require(files.count == 6, "\(name)")
                #expect(Set(files).count == 6)
                var perRound: [Double] = []
                for round in 0..<3 {
                    let small = try #require(CallgrindFile.read(files[2 * round])?.instructions, "\(files[2 * round])")
                    let large = try #require(CallgrindFile.read(files[2 * round + 1])?.instructions, "\(files[2 * round + 1])")
                    perRound.append((Double(large) - Double(small)) / 60)
                }
                perRound.sort()
                let median = try #require(figure(run, "instructions_per_delivery"), "\(name)")
                #expect(abs(median - perRound[1]) < 0.01, "\(name): \(median) is not the median of \(perRound)")
                #expect(abs((figure(run, "instructions_per_delivery_min") ?? 0) - perRound[0]) < 0.01, "\(name)")
                #expect(abs((figure(run, "instructions_per_delivery_max") ?? 0) - perRound[2]) < 0.01, "\(name)")
                // The runs shown are the median round's.
                let shown = (figure(run, "large_instructions") ?? 0) - (figure(run, "small_instructions") ?? 0)
                #expect(abs(shown / 60 - median) < 0.01, "\(name)")
            }
            #expect(io.capturedOut.contains("in each of 3 rounds"), "the notes list every round's figure")
        }

        @Test("profile refuses options it cannot honour")
        func refusesServer() async throws {
            let (code, _, io) = try await runBench(["profile", "--server", "127.0.0.1:1"])
            #expect(code != 0)
            #expect(io.capturedErr.contains("starts its own gateway and redis-server"))
            let (countsCode, _, countsIO) = try await runBench(["profile", "--counts", "5"])
            #expect(countsCode != 0)
            #expect(countsIO.capturedErr.contains("--counts"))
        }
    }
}
