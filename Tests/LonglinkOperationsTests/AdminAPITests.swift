import Foundation
import Glibc
import LonglinkClient
import LonglinkServer
import LonglinkCore
import LonglinkGateway
import LonglinkHTTP
import LonglinkTestSupport
import Testing
import LonglinkJSON
import LonglinkOperations

@Suite("Operations listener: metrics, health, admin API (real gateway, real sockets)", .serialized, .ownThreads)
struct AdminAPITests {
    let route = Route.order(.taxi, OrderID("8812")!)

    @Test("/metrics passes promtool check metrics and counts what happened")
    func metricsPassPromtool() async throws {
        let harness = try GatewayHarness(operations: true)
        defer { harness.stop() }
        let peer = try FramePeer.connected(port: harness.port, token: "t")
        _ = try peer.subscribe(route)
        let publisher = try harness.client()
        defer { publisher.close() }
        for change in taxiChanges("8812", count: 3) { _ = try await publisher.publish(change) }
        do {
            _ = try await publisher.publish(OrderChange(orderID: OrderID("8812")!, line: .taxi, targetState: "completed"))
        } catch {}
        #expect(await eventually { harness.running.gateway.counters.snapshot.pushes >= 3 })

        let response = try HTTPTestClient.fetch(port: harness.adminPort, "GET", "/metrics")
        #expect(response.status == 200)
        #expect(response.header("content-type")?.hasPrefix("text/plain; version=0.0.4") == true)
        let text = response.text
        for needle in [
            "longlink_connections{transport=\"tcp\"} 2", "longlink_publishes_applied_total 3",
            "longlink_publishes_refused_total{code=\"409\",reason=\"illegal_transition\"} 1", "longlink_pushes_total 3",
            "longlink_store_apply_latency_seconds_count 4", "longlink_loop_iteration_seconds_bucket{loop=\"0\",le=\"+Inf\"}",
            "longlink_publish_deliver_latency_seconds_bucket", "longlink_outbound_queue_bytes_bucket", "longlink_ready 1",
            "longlink_recoveries_total{recovered=\"false\"} 0", "longlink_disconnects_total",
        ] {
            #expect(text.contains(needle), "missing \(needle)")
        }
        let (status, output) = try runPromtool(text)
        #expect(status == 0, "promtool: \(output)")
    }

    @Test("publishes committed as one batch are each counted in the publish→deliver latency histogram")
    func batchLatencyCount() async throws {
        let harness = try GatewayHarness(operations: true)
        defer { harness.stop() }
        let subscriber = try FramePeer.connected(port: harness.port, token: "t")
        _ = try subscriber.subscribe(route)
        let publisher = try FramePeer.connected(port: harness.port, token: "t")
        // Six publishes in one write: read together, committed as one batch, stored at one instant (one timestamp),
        // and observed in the histogram as one run of six.
        var bytes: [UInt8] = []
        for (index, change) in taxiChanges("8812", count: 6).enumerated() {
            let request = PublishRequest(
                requestID: UInt32(index + 1), orderID: change.orderID.rawValue, line: change.line.name,
                targetState: change.targetState.name, fields: change.fields
            )
            bytes += try FramePeer.bytes(.publish(request))
        }
        try publisher.sendRaw(bytes)
        #expect(await eventually { harness.running.gateway.counters.snapshot.pushes >= 6 })
        let text = try HTTPTestClient.fetch(port: harness.adminPort, "GET", "/metrics").text
        #expect(text.contains("longlink_pushes_total 6"), "\(text)")
        #expect(text.contains("longlink_publish_deliver_latency_seconds_count 6"), "\(text)")
    }

    @Test("/metrics carries the process metrics of the Prometheus convention, read from /proc/self")
    func processMetrics() throws {
        let harness = try GatewayHarness(operations: true)
        defer { harness.stop() }
        let text = try HTTPTestClient.fetch(port: harness.adminPort, "GET", "/metrics").text
        func value(_ name: String) -> Double? {
            text.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Double($0.split(separator: " ")[1]) }
        }
        for (name, type) in [
            ("process_cpu_seconds_total", "counter"), ("process_resident_memory_bytes", "gauge"),
            ("process_virtual_memory_bytes", "gauge"), ("process_open_fds", "gauge"), ("process_max_fds", "gauge"),
            ("process_start_time_seconds", "gauge"),
        ] {
            #expect(text.contains("# TYPE \(name) \(type)\n"), "missing \(name) (\(type))")
            #expect(value(name) != nil, "no sample for \(name)")
        }
        // This process serves the gateway: compare with what it reads about itself.
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        #expect(value("process_max_fds") == Double(limit.rlim_cur))
        let openFDs = value("process_open_fds") ?? 0
        #expect(openFDs >= 3 && openFDs <= Double(limit.rlim_cur))
        #expect((value("process_cpu_seconds_total") ?? 0) > 0)
        let resident = value("process_resident_memory_bytes") ?? 0
        #expect(resident > 4 * 1024 * 1024 && resident < (value("process_virtual_memory_bytes") ?? 0))
        let now = Date().timeIntervalSince1970
        let started = value("process_start_time_seconds") ?? 0
        #expect(started <= now + 1 && started > now - 6 * 3600, "start time \(started), now \(now)")
        let (status, output) = try runPromtool(text)
        #expect(status == 0, "promtool: \(output)")
    }

    @Test("/healthz is 200 while running; /readyz is 200 when ready and 503 once draining")
    func healthAndReadiness() async throws {
        let harness = try GatewayHarness(operations: true)
        defer { harness.stop() }
        #expect(try HTTPTestClient.fetch(port: harness.adminPort, "GET", "/healthz").status == 200)
        let ready = try HTTPTestClient.fetch(port: harness.adminPort, "GET", "/readyz")
        #expect(ready.status == 200 && ready.text == "ready\n")
        let drained = try HTTPTestClient.fetch(port: harness.adminPort, "POST", "/admin/drain", headers: adminAuth, body: "")
        #expect(drained.status == 202)
        let draining = try HTTPTestClient.fetch(port: harness.adminPort, "GET", "/readyz")
        #expect(draining.status == 503 && draining.text == "draining\n")
        #expect(await eventually { harness.running.gateway.currentState == .draining })
    }

    @Test("admin endpoints need a bearer token; unknown paths are 404, wrong methods 405 with Allow")
    func authenticationAndRouting() throws {
        let harness = try GatewayHarness(operations: true)
        defer { harness.stop() }
        let port = harness.adminPort
        let missing = try HTTPTestClient.fetch(port: port, "GET", "/admin/connections")
        #expect(missing.status == 401)
        #expect(missing.header("www-authenticate")?.hasPrefix("Bearer") == true)
        #expect(try HTTPTestClient.fetch(port: port, "GET", "/admin/connections", headers: [("Authorization", "Basic eA==")]).status == 401)
        #expect(try HTTPTestClient.fetch(port: port, "GET", "/nope").status == 404)
        let wrongMethod = try HTTPTestClient.fetch(port: port, "DELETE", "/metrics")
        #expect(wrongMethod.status == 405 && wrongMethod.header("allow") == "GET, HEAD")
        #expect(try HTTPTestClient.fetch(port: port, "GET", "/admin/publish", headers: adminAuth).status == 405)
        #expect(try HTTPTestClient.fetch(port: port, "POST", "/admin/publish", headers: adminAuth, body: "{").status == 400)
        #expect(try HTTPTestClient.fetch(port: port, "GET", "/").header("content-type")?.hasPrefix("text/html") == true)
    }

    @Test("GET /admin/connections lists clients with user, subscriptions and loop; sort and filter apply")
    func connections() throws {
        let harness = try GatewayHarness(operations: true)
        defer { harness.stop() }
        let peer = try FramePeer.connected(port: harness.port, token: "rider-token")
        _ = try peer.subscribe(route)
        let idle = try FramePeer.connected(port: harness.port)
        defer { idle.close() }  // connected until the listing is read

        let response = try HTTPTestClient.fetch(port: harness.adminPort, "GET", "/admin/connections?sort=subscriptions", headers: adminAuth)
        #expect(response.status == 200)
        let body = try JSONValue.parse(response.body)
        let list = try #require(body["connections"]?.arrayValue)
        #expect(list.count == 2)
        let first = try #require(list.first)
        #expect(first["id"]?.stringValue?.hasPrefix("c") == true)
        #expect(first["address"]?.stringValue?.hasPrefix("127.0.0.1:") == true)
        #expect(first["user"] == .string("dev"))
        #expect(first["subscriptions"] == .array([.string("order://taxi/8812")]))
        #expect(first["outbound_bytes"]?.intValue == 0)
        #expect(first["last_activity_ms_ago"]?.intValue != nil)
        #expect(first["tls"] == .bool(false))
        #expect(first["client"] == .string("raw-peer"))
        #expect(first["loop"]?.intValue != nil)
        #expect(list[1]["user"] == .string("anonymous"))

        let filtered = try HTTPTestClient.fetch(port: harness.adminPort, "GET", "/admin/connections?filter=order%3A%2F%2Ftaxi", headers: adminAuth)
        #expect(try JSONValue.parse(filtered.body)["connections"]?.arrayValue?.count == 1)
        #expect(try HTTPTestClient.fetch(port: harness.adminPort, "GET", "/admin/connections?sort=bogus", headers: adminAuth).status == 400)
    }

    @Test("POST /admin/connections/{id}/disconnect sends the numbered code, then closes")
    func disconnect() throws {
        let harness = try GatewayHarness(operations: true)
        defer { harness.stop() }
        let peer = try FramePeer(port: harness.port)
        let connected = try #require(try peer.handshake(token: "t"))
        let response = try HTTPTestClient.fetch(
            port: harness.adminPort,
            "POST",
            "/admin/connections/\(connected.clientID)/disconnect",
            headers: adminAuth,
            body: "{\"code\": 3504, \"reason\": \"banned\"}"
        )
        #expect(response.status == 200)
        let frame = try #require(try peer.disconnect())
        #expect(frame.code == .adminBan && frame.reason == "banned")
        #expect(try peer.closedByServer())
        let again = try HTTPTestClient.fetch(port: harness.adminPort, "POST", "/admin/connections/\(connected.clientID)/disconnect", headers: adminAuth, body: "")
        #expect(again.status == 404)
        let badCode = try HTTPTestClient.fetch(port: harness.adminPort, "POST", "/admin/connections/c1/disconnect", headers: adminAuth, body: "{\"code\": 200}")
        #expect(badCode.status == 422)
    }

    @Test("POST /admin/publish applies a change that subscribers receive; GET /admin/orders shows snapshot and history")
    func publishAndLookup() throws {
        let harness = try GatewayHarness(operations: true)
        defer { harness.stop() }
        let peer = try FramePeer.connected(port: harness.port)
        _ = try peer.subscribe(route)
        let port = harness.adminPort
        let created = try HTTPTestClient.fetch(port: port, "POST", "/admin/publish", headers: adminAuth, body: #"{"order":"8812","line":"taxi","state":"created"}"#)
        #expect(created.status == 200)
        #expect(try JSONValue.parse(created.body)["offset"]?.intValue == 1)
        _ = try HTTPTestClient.fetch(port: port, "POST", "/admin/publish", headers: adminAuth, body: #"{"order":"8812","line":"taxi","state":"dispatching"}"#)
        let assigned = try HTTPTestClient.fetch(
            port: port,
            "POST",
            "/admin/publish",
            headers: adminAuth,
            body: #"{"order":"8812","line":"taxi","state":"driver_assigned","driver_id":"d-1","eta_seconds":240,"lat_e6":55750000,"lon_e6":37610000}"#
        )
        #expect(assigned.status == 200)
        let pushed = try #require(try peer.next { frame -> Push? in
            guard case .push(let push) = frame, push.record.position.offset == 3 else { return nil }
            return push
        })
        #expect(pushed.record.fields.driverID == "d-1")

        let illegal = try HTTPTestClient.fetch(port: port, "POST", "/admin/publish", headers: adminAuth, body: #"{"order":"8812","line":"taxi","state":"created"}"#)
        #expect(illegal.status == 409)
        #expect(try JSONValue.parse(illegal.body)["code"]?.intValue == 409)
        #expect(try HTTPTestClient.fetch(port: port, "POST", "/admin/publish", headers: adminAuth, body: #"{"line":"taxi"}"#).status == 422)

        let order = try HTTPTestClient.fetch(port: port, "GET", "/admin/orders/taxi/8812", headers: adminAuth)
        #expect(order.status == 200)
        let body = try JSONValue.parse(order.body)
        #expect(body["snapshot"]?["state"] == .string("driver_assigned"))
        #expect(body["snapshot"]?["eta_seconds"]?.intValue == 240)
        #expect(body["history"]?.arrayValue?.map { $0["to"]?.stringValue ?? "" } == ["created", "dispatching", "driver_assigned"])
        #expect(body["history"]?.arrayValue?[1]["from"] == .string("created"))
        #expect(try HTTPTestClient.fetch(port: port, "GET", "/admin/orders/taxi/nope", headers: adminAuth).status == 404)
    }

    @Test("GET /admin/tap streams every matching stored record as a Server-Sent Event")
    func tap() async throws {
        let harness = try GatewayHarness(operations: true)
        defer { harness.stop() }
        let all = try HTTPTestClient(port: harness.adminPort)
        try all.request("GET", "/admin/tap?route=order%3A%2F%2Ftaxi%2F*", headers: adminAuth)
        let assignedOnly = try HTTPTestClient(port: harness.adminPort)
        try assignedOnly.request("GET", "/admin/tap?line=taxi&state=driver_assigned", headers: adminAuth)
        for client in [all, assignedOnly] {
            #expect(client.receive(until: { String(decoding: $0, as: UTF8.self).contains(": tap") }))
        }
        #expect(await eventually { harness.running.admin?.metricsText().contains("longlink_tap_clients 2") == true })
        for change in taxiChanges("8812", count: 3) { try await harness.apply(change) }
        try await harness.apply(OrderChange(orderID: OrderID("1")!, line: .express, targetState: "created"))

        #expect(all.receive(until: { _ in events(all).count >= 3 }))
        let seen = events(all)
        try #require(seen.count == 3, "tap sent: \(String(decoding: all.buffered, as: UTF8.self))")
        #expect(seen.map { $0["offset"]?.intValue ?? 0 } == [1, 2, 3])
        #expect(seen[2]["route"] == .string("order://taxi/8812"))
        #expect(seen[2]["from"] == .string("dispatching"))
        #expect(seen[2]["to"] == .string("driver_assigned"))
        #expect(seen[2]["driver_id"] == .string("d-2"))
        #expect(seen[2]["eta_seconds"]?.intValue == 2)
        #expect(seen[2]["time_ms"]?.intValue != nil && seen[0]["from"] == nil)
        #expect(all.buffered.count > 0 && String(decoding: all.buffered, as: UTF8.self).contains("text/event-stream"))
        #expect(assignedOnly.receive(until: { _ in events(assignedOnly).count >= 1 }))
        #expect(events(assignedOnly).allSatisfy { $0["to"] == .string("driver_assigned") })
        #expect(!String(decoding: all.buffered, as: UTF8.self).contains("express"))
    }

    @Test("GET/PUT /admin/log-level reads and changes the level of a switchable logger")
    func logLevel() throws {
        let harness = try GatewayHarness(operations: true)
        defer { harness.stop() }
        // The harness logger is fixed: the endpoint says so instead of pretending.
        #expect(try HTTPTestClient.fetch(port: harness.adminPort, "GET", "/admin/log-level", headers: adminAuth).status == 409)
    }
}

/// Runs `promtool check metrics` on `text` (killed after 120 s); returns its exit status and output.
func runPromtool(_ text: String) throws -> (Int32, String) {
    let output = try ProcessRunner.run(
        ["/usr/bin/promtool", "check", "metrics"], input: Array(text.utf8), mergingStandardError: true, timeout: .seconds(120)
    )
    return (output.status, String(decoding: output.stdout, as: UTF8.self))
}
