import LonglinkTestSupport
import Foundation
import LonglinkInspect
import Testing

/// The admin clients' parts: SSE parsing, HTTP response reading, the connections table and tap lines, and
/// `inspect tap`/`connections` against a loopback HTTP server speaking the agreed contract.
@Suite("inspect tap and connections (clients)", .ownThreads)
struct AdminClientTests {
    static let tapEvents = [
        SSEEvent(data: #"{"route":"order://taxi/8812","epoch":1,"offset":3,"from":"dispatching","to":"driver_assigned","time_ms":1732900000000,"driver_id":"d-1","eta_seconds":240,"lat_e6":31230416,"lon_e6":121473701}"#),
        SSEEvent(name: "record", data: "{\"route\":\"order://taxi/8812\",\"epoch\":1,\"offset\":4,\n\"from\":\"driver_assigned\",\"to\":\"cancelled\",\"time_ms\":1732900000123,\"cancellation_reason\":\"rider \\\"changed\\\" plans\"}", id: "7"),
        SSEEvent(data: #"{"route":"order://express/77","epoch":2,"offset":1,"to":"created","time_ms":1732900001000}"#, id: "7"),
        SSEEvent(data: "not json", id: "7"),
    ]

    static let tapLines = [
        "2024-11-29T17:06:40.000Z order://taxi/8812 1:3 dispatching → driver_assigned driver=d-1 eta=240s loc=31.230416,121.473701",
        "2024-11-29T17:06:40.123Z order://taxi/8812 1:4 driver_assigned → cancelled reason=\"rider \\\"changed\\\" plans\"",
        "2024-11-29T17:06:41.000Z order://express/77 2:1 ∅ → created",
    ]

    @Test("parses the SSE fixture in any split: BOM, comments, CRLF/CR/LF, multi-line data, event names, ids", arguments: [1, 2, 3, 5, 64, 10_000])
    func sse(split: Int) throws {
        let bytes = try Fixtures.bytes("tap_events.txt")
        var parser = SSEParser()
        var events: [SSEEvent] = []
        var offset = 0
        while offset < bytes.count {
            events += parser.feed(bytes[offset..<min(bytes.count, offset + split)])
            offset += split
        }
        #expect(events == Self.tapEvents)
    }

    @Test("renders tap records plain, and coloured for a terminal")
    func tapLines() throws {
        let records = try Self.tapEvents.prefix(3).map { try TapRecord(json: $0.data) }
        #expect(records.map { $0.line(colour: false) } == Self.tapLines)
        #expect(records[1].line(colour: true) == "\u{1B}[2m2024-11-29T17:06:40.123Z\u{1B}[0m \u{1B}[36morder://taxi/8812\u{1B}[0m "
            + "\u{1B}[2m1:4\u{1B}[0m \u{1B}[33mdriver_assigned\u{1B}[0m → \u{1B}[31;1mcancelled\u{1B}[0m reason=\"rider \\\"changed\\\" plans\"")
        #expect(throws: AdminError.self) { try TapRecord(json: "not json") }
    }

    @Test("summarises the tap rate once a second for --stats")
    func stats() throws {
        let start = ContinuousClock.now
        var stats = TapStats(now: start)
        for event in Self.tapEvents.prefix(3) { stats.record(try TapRecord(json: event.data)) }
        #expect(stats.tick(now: start + .milliseconds(999)) == nil)
        #expect(stats.tick(now: start + .seconds(2)) == "[stats] 1.5 records/s over 2.0s, 2 routes, 3 total")
        #expect(stats.tick(now: start + .seconds(4)) == "[stats] 0.0 records/s over 2.0s, 0 routes, 3 total")
    }

    @Test("reads chunked, sized and close-delimited HTTP bodies")
    func httpReader() throws {
        let body = Array("hello, chunked world".utf8)
        let response = OneShotHTTPServer.chunked(type: "text/plain", body: body, chunk: 6)
        var reader = HTTPResponseReader()
        var out: [UInt8] = []
        for byte in response { out += try reader.feed([byte]) }
        #expect(out == body)
        #expect(reader.isComplete)
        #expect(reader.head?.status == 200)
        var sized = HTTPResponseReader()
        #expect(try sized.feed(Array("HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\nabcdef".utf8)) == Array("abc".utf8))
        #expect(sized.isComplete && sized.head?.status == 404 && sized.head?.reason == "Not Found")
        var bad = HTTPResponseReader()
        #expect(throws: AdminError.self) { try bad.feed(Array("SSH-2.0-OpenSSH\r\n\r\n".utf8)) }
    }

    @Test("sorts, filters and aligns the connections table")
    func table() throws {
        let rows = try AdminConnection.list(json: try Fixtures.bytes("connections.json"))
        #expect(try ConnectionTable(sort: "id", filter: nil).render(rows) == [
            "ID   ADDRESS         USER         CLIENT           TLS  LOOP  OUTBOUND   IDLE  SUBSCRIPTIONS",
            "c1   [::1]:5600      -            -                no      0   3.0 MiB   4.0s  1: order://express/77",
            "c2   127.0.0.1:5555  rider-1      longlink-swift   no      0       0 B  120ms  2: order://taxi/8812, order://taxi/9",
            "c10  10.0.0.7:40100  driver-4711  longlink-kotlin  yes     1   1.5 KiB  1m01s  -",
            "3 connections",
        ])
        #expect(try ConnectionTable(sort: "-outbound", filter: nil).rows(rows).map(\.id) == ["c1", "c10", "c2"])
        #expect(try ConnectionTable(sort: "idle", filter: nil).rows(rows).map(\.id) == ["c2", "c1", "c10"])
        #expect(try ConnectionTable(sort: "last_activity_ms_ago", filter: nil).rows(rows).map(\.id) == ["c2", "c1", "c10"])
        #expect(try ConnectionTable(sort: "-subscriptions", filter: nil).rows(rows).map(\.id) == ["c2", "c1", "c10"])
        let taxi = try ConnectionTable(sort: "id", filter: "TAXI/88")
        #expect(taxi.render(rows).last == "1 of 3 connections (filter 'TAXI/88')")
        #expect(taxi.rows(rows).map(\.id) == ["c2"])
        #expect(try ConnectionTable(sort: "user", filter: "kotlin").rows(rows).map(\.id) == ["c10"])
        #expect(throws: AdminError.self) { try ConnectionTable(sort: "colour", filter: nil) }
        #expect(rows[1].json == #"{"id":"c2","address":"127.0.0.1:5555","user":"rider-1","subscriptions":["order://taxi/8812","order://taxi/9"],"outbound_bytes":0,"last_activity_ms_ago":120,"tls":false,"client":"longlink-swift","loop":0}"#)
    }

    @Test("inspect connections asks /admin/connections with the bearer token and prints the table")
    func connectionsCommand() async throws {
        let body = try Fixtures.bytes("connections.json")
        let server = try OneShotHTTPServer(response: Array("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body)
        defer { server.stop() }
        let result = await runCLI(["inspect", "connections", "--server", "127.0.0.1:\(server.port)", "--sort", "-idle"],
                                  environment: ["LONGLINK_TOKEN": "admin-secret"])
        #expect(result.code == 0, "\(result.err)")
        #expect(result.lines.count == 5)
        #expect(result.lines[1].hasPrefix("c10 "))
        let request = try #require(server.received.first)
        #expect(request.hasPrefix("GET /admin/connections HTTP/1.1\r\n"))
        #expect(request.contains("\r\nAuthorization: Bearer admin-secret\r\n"))
    }

    @Test("inspect tap sends the filters, prints records plain when piped and stops after --count")
    func tapCommand() async throws {
        let server = try OneShotHTTPServer(response: OneShotHTTPServer.chunked(type: "text/event-stream", body: try Fixtures.bytes("tap_events.txt")))
        defer { server.stop() }
        let result = await runCLI(["inspect", "tap", "--server", "127.0.0.1:\(server.port)", "--token", "t0k",
                                   "--route", "order://taxi/*", "--state", "driver assigned", "--count", "3", "--duration", "20s"])
        #expect(result.code == 0, "\(result.err)")
        #expect(result.lines == Self.tapLines)
        let request = try #require(server.received.first)
        #expect(request.hasPrefix("GET /admin/tap?route=order%3A%2F%2Ftaxi%2F%2A&state=driver%20assigned HTTP/1.1\r\n"))
        #expect(request.contains("Accept: text/event-stream"))
        #expect(request.contains("Authorization: Bearer t0k"))
    }

    @Test("reports a missing admin endpoint (404) and a refused token clearly")
    func errors() async throws {
        let missing = try OneShotHTTPServer(response: Array("HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot found".utf8))
        defer { missing.stop() }
        let result = await runCLI(["inspect", "connections", "--server", "127.0.0.1:\(missing.port)"])
        #expect(result.code == 3)
        #expect(result.err == "longlink inspect: 127.0.0.1:\(missing.port) does not serve /admin/connections (404): "
            + "is it the gateway's admin listener (serve --metrics-listen)?\n")
        let refused = try OneShotHTTPServer(response: Array("HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n".utf8))
        defer { refused.stop() }
        let denied = await runCLI(["inspect", "tap", "--server", "127.0.0.1:\(refused.port)", "--count", "1"])
        #expect(denied.code == 1)
        #expect(denied.err.contains("refused the admin token (HTTP 401)"))
    }
}
