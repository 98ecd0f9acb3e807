import Foundation
import LonglinkClient
import LonglinkCommands
import LonglinkCore
import LonglinkHTTP
import LonglinkTestSupport
import Synchronization
import Testing
import LonglinkJSON

@Suite("Remote feature toggles end to end (admin API and CLI → Store → push → client)", .serialized, .ownThreads)
struct FeatureToggleTests {
    let route = LonglinkClient.toggleRoute("new_home", app: "rider")!

    private func setToggle(_ harness: GatewayHarness, _ value: String) throws -> JSONValue {
        let response = try HTTPTestClient.fetch(
            port: harness.adminPort,
            "PUT",
            "/admin/toggles/rider/new_home",
            headers: adminAuth,
            body: "{\"value\": \(value)}"
        )
        #expect(response.status == 200, "\(response.text)")
        return try JSONValue.parse(response.body)
    }

    @Test("a client sees the snapshot on subscribe, every change pushed, and isEnabled answers from the last value")
    func pushedToSubscribers() async throws {
        let harness = try GatewayHarness(operations: true)
        defer { harness.stop() }
        let tap = try HTTPTestClient(port: harness.adminPort)
        try tap.request("GET", "/admin/tap?route=config%3A%2F%2F*", headers: adminAuth)
        #expect(tap.receive(until: { String(decoding: $0, as: UTF8.self).contains(": tap") }))
        #expect(try setToggle(harness, "false")["offset"]?.intValue == 1)
        #expect(tap.receive(until: { _ in events(tap).count == 1 }))
        #expect(events(tap).first?["route"] == .string("config://rider/new_home"))
        #expect(events(tap).first?["toggle"] == .bool(false))
        let client = try harness.client()
        defer { client.close() }
        let log = ChangeLog()
        let token = client.observe(route, delegate: log)
        defer { token.cancel() }
        #expect(!client.isEnabled("new_home", app: "rider"))
        #expect(await eventually { log.all.count == 1 })
        #expect(log.all.first?.kind == .snapshot)
        #expect(log.all.first?.snapshot.fields.toggle == .bool(false))
        #expect(client.toggle("new_home", app: "rider")?.value == .bool(false))

        _ = try setToggle(harness, "true")
        #expect(await eventually { client.isEnabled("new_home", app: "rider") })
        #expect(await eventually { log.offsets == [2] })
        _ = try setToggle(harness, #"{"rollout": 40}"#)
        #expect(await eventually { client.toggle("new_home", app: "rider")?.value == .rollout(percent: 40) })
        let users = (0..<200).map { "user-\($0)" }
        let enabled = users.filter { client.isEnabled("new_home", app: "rider", userID: $0) }
        #expect(enabled == users.filter { ToggleValue.bucket(userID: $0, toggle: "new_home") < 40 })
        #expect(!enabled.isEmpty && enabled.count < 200)
        _ = try setToggle(harness, #""night""#)
        #expect(await eventually { client.toggle("new_home", app: "rider")?.value == .string("night") })
        #expect(client.isEnabled("new_home", app: "rider"))
        #expect(await eventually { log.offsets == [2, 3, 4] })

        let listed = try HTTPTestClient.fetch(port: harness.adminPort, "GET", "/admin/toggles?app=rider", headers: adminAuth)
        #expect(try JSONValue.parse(listed.body)["toggles"]?.arrayValue?.first?["value"] == .string("night"))
        let bad = try HTTPTestClient.fetch(port: harness.adminPort, "PUT", "/admin/toggles/Rider/x", headers: adminAuth, body: "{\"value\": true}")
        #expect(bad.status == 400)
    }

    @Test("a client that lost its connection gets the value set meanwhile after it reconnects")
    func recoveryAfterReconnect() async throws {
        let harness = try GatewayHarness(operations: true)
        defer { harness.stop() }
        _ = try setToggle(harness, "false")
        let client = try harness.client()
        defer { client.close() }
        let values = ToggleLog()
        let token = client.observeToggle("new_home", app: "rider") { values.add($0) }
        defer { token?.cancel() }
        #expect(await eventually { values.all.count == 1 })
        for round in 0..<3 {
            client.simulateNetworkLoss()
            _ = try setToggle(harness, round % 2 == 0 ? "true" : "false")
            let expected = round % 2 == 0
            #expect(await eventually { client.isEnabled("new_home", app: "rider") == expected && values.all.last?.value == .bool(expected) })
        }
        #expect(values.all.map(\.position.offset) == [1, 2, 3, 4])
    }

    @Test("longlink toggles set and list talk to the admin API")
    func commandLine() async throws {
        let harness = try GatewayHarness(operations: true)
        defer { harness.stop() }
        let client = try harness.client()
        defer { client.close() }
        client.watchToggle("new_home", app: "rider")
        let admin = "127.0.0.1:\(harness.adminPort)"
        let io = CommandIO.capturing()
        let set = await LonglinkCLI.main(arguments: ["toggles", "set", "rider/new_home", "25%", "--admin", admin], environment: ["LONGLINK_TOKEN": "dev"], io: io)
        #expect(set == 0, "\(io.capturedErr)")
        #expect(io.capturedOut.contains("config://rider/new_home = 25% (offset 1)"))
        #expect(await eventually { client.toggle("new_home", app: "rider")?.value == .rollout(percent: 25) })
        let on = await LonglinkCLI.main(arguments: ["toggles", "set", "rider/new_home", "on", "--admin", admin], environment: [:], io: io)
        #expect(on == 0)
        #expect(await eventually { client.isEnabled("new_home", app: "rider") })
        let listIO = CommandIO.capturing()
        #expect(await LonglinkCLI.main(arguments: ["toggles", "list", "rider", "--admin", admin], environment: [:], io: listIO) == 0)
        #expect(listIO.capturedOut == "config://rider/new_home = on (offset 2)\n")
        let badIO = CommandIO.capturing()
        #expect(await LonglinkCLI.main(arguments: ["toggles", "set", "nope", "on", "--admin", admin], environment: [:], io: badIO) == 2)
    }
}

/// Toggles an observer was told, in order.
final class ToggleLog: Sendable {
    private let values = Mutex<[FeatureToggle]>([])
    func add(_ toggle: FeatureToggle) { values.withLock { $0.append(toggle) } }
    var all: [FeatureToggle] { values.withLock { $0 } }
}
