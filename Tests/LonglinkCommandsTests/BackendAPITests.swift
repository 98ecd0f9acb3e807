import Foundation
import LonglinkJSON
import LonglinkTestSupport
import Testing

/// The backend HTTP API (`--api-listen`) of a real `longlink serve` process started like `make run`, over real
/// sockets: happy paths, publisher scopes, every bad-input case (each refused with the field named and nothing
/// stored), batch ordering and partial failure, idempotency keys.
@Suite("Backend API: POST /api/v1/publish, /publish/batch, GET /api/v1/orders", .serialized, .ownThreads)
struct BackendAPITests {
    /// One request on a fresh connection.
    static func call(
        _ gateway: MakeRunGateway,
        _ method: String,
        _ path: String,
        token: String?,
        body: String? = nil,
        headers: [(String, String)] = [("Content-Type", "application/json")]
    ) throws -> (status: Int, json: JSONValue?, text: String) {
        var all = headers
        if let token { all.append(("Authorization", "Bearer \(token)")) }
        let response = try HTTPTestClient.fetch(port: gateway.apiPort, method, path, headers: all, body: body)
        return (response.status, try? JSONValue.parse(response.body), response.text)
    }

    @Test("a publisher token publishes over HTTP; the result comes after commit; the order reads back with its history")
    func happyPath() throws {
        let gateway = try MakeRunGateway()
        let publisher = try gateway.token("--sub backend-1 --role publisher --routes 'order://taxi/*'")
        let created = try Self.call(gateway, "POST", "/api/v1/publish", token: publisher, body: #"{"order":"7001","line":"taxi","state":"created"}"#)
        #expect(created.status == 200, "\(created.text)")
        #expect(created.json?["route"]?.stringValue == "order://taxi/7001")
        #expect(created.json?["offset"]?.intValue == 1)
        #expect(created.json?["deduplicated"]?.boolValue == false)
        let assigned = try Self.call(
            gateway, "POST", "/api/v1/publish", token: publisher,
            body: #"{"order":"7001","line":"taxi","state":"dispatching"}"#
        )
        #expect(assigned.status == 200, "\(assigned.text)")
        let read = try Self.call(gateway, "GET", "/api/v1/orders/taxi/7001", token: publisher)
        #expect(read.status == 200, "\(read.text)")
        #expect(read.json?["snapshot"]?["state"]?.stringValue == "dispatching")
        #expect(read.json?["history"]?.arrayValue?.count == 2)
        let missing = try Self.call(gateway, "GET", "/api/v1/orders/taxi/nope", token: publisher)
        #expect(missing.status == 404 && missing.json?["code"]?.intValue == 404, "\(missing.text)")
        let illegal = try Self.call(gateway, "POST", "/api/v1/publish", token: publisher, body: #"{"order":"7001","line":"taxi","state":"paid"}"#)
        #expect(illegal.status == 409 && illegal.json?["code"]?.intValue == 409, "\(illegal.text)")
        #expect(illegal.text.contains("allowed next"), "\(illegal.text)")
        #expect(!illegal.text.contains("StoreError"), "no internal type names: \(illegal.text)")
    }

    @Test("scopes: no token 401, a subscriber 403, a publisher outside its routes 403; nothing is stored")
    func publisherScopes() throws {
        let gateway = try MakeRunGateway()
        let body = #"{"order":"7101","line":"express","state":"created"}"#
        let none = try Self.call(gateway, "POST", "/api/v1/publish", token: nil, body: body)
        #expect(none.status == 401 && none.json?["code"]?.intValue == 401, "\(none.text)")
        let forged = try Self.call(gateway, "POST", "/api/v1/publish", token: "not.a.token", body: body)
        #expect(forged.status == 401, "\(forged.text)")
        let subscriber = try gateway.token("--sub rider-1 --routes 'order://*'")
        let asSubscriber = try Self.call(gateway, "POST", "/api/v1/publish", token: subscriber, body: body)
        #expect(asSubscriber.status == 403 && asSubscriber.json?["code"]?.intValue == 403, "\(asSubscriber.text)")
        let taxiPublisher = try gateway.token("--sub backend-1 --role publisher --routes 'order://taxi/*'")
        let outside = try Self.call(gateway, "POST", "/api/v1/publish", token: taxiPublisher, body: body)
        #expect(outside.status == 403 && outside.text.contains("order://express/7101"), "\(outside.text)")
        let batch = try Self.call(
            gateway, "POST", "/api/v1/publish/batch", token: taxiPublisher,
            body: #"{"changes":[{"order":"7102","line":"taxi","state":"created"},"# + body + "]}"
        )
        #expect(batch.status == 403, "one change outside the scope refuses the whole batch: \(batch.text)")
        let readOutside = try Self.call(gateway, "GET", "/api/v1/orders/express/7101", token: taxiPublisher)
        #expect(readOutside.status == 403, "\(readOutside.text)")
        let admin = try gateway.token("--sub ops --role admin")
        for order in ["express/7101", "taxi/7102"] {
            let read = try Self.call(gateway, "GET", "/api/v1/orders/\(order)", token: admin)
            #expect(read.status == 404, "\(order) must not be stored: \(read.text)")
        }
    }

    @Test("bad input: each a clear 4xx naming the field, nothing stored")
    func badInput() throws {
        let gateway = try MakeRunGateway(arguments: "--api-max-body 1KiB --api-max-batch 3 --api-body-timeout 500ms")
        let token = try gateway.token("--sub backend-1 --role publisher --routes 'order://taxi/*'")
        let cases: [(body: String, status: Int, field: String)] = [
            (#"{"order":"7201","line":"taxi","state":"created""#, 400, "body"),
            (#"["order"]"#, 400, "body"),
            (#"{"order":7201,"line":"taxi","state":"created"}"#, 422, "order"),
            (#"{"order":"7201","line":"taxi","state":"created","eta_seconds":"240"}"#, 422, "eta_seconds"),
            (#"{"order":"7201","line":"taxi","state":"created","eta_seconds":2.5}"#, 422, "eta_seconds"),
            (#"{"order":"7201","line":"taxi","state":"created","eta_seconds":-1}"#, 422, "eta_seconds"),
            (#"{"order":"7201","line":"taxi","state":"created","colour":"red"}"#, 422, "colour"),
            (#"{"order":"7201","line":"taxi","state":"created","lat_e6":1}"#, 422, "lon_e6"),
            (#"{"order":"7201","line":"taxi","state":"created","lat_e6":91000000,"lon_e6":0}"#, 422, "lat_e6"),
            (#"{"order":"7201","line":"taxi"}"#, 422, "state"),
            (#"{"order":"72 01","line":"taxi","state":"created"}"#, 422, "order"),
            (#"{"order":"7201","line":"Taxi!","state":"created"}"#, 422, "line"),
            (#"{"order":"7201","order":"7202","line":"taxi","state":"created"}"#, 422, "order"),
        ]
        for item in cases {
            let result = try Self.call(gateway, "POST", "/api/v1/publish", token: token, body: item.body)
            #expect(result.status == item.status, "\(item.body) → \(result.text)")
            #expect(result.json?["field"]?.stringValue == item.field, "\(item.body) → \(result.text)")
        }
        let wrongType = try Self.call(
            gateway, "POST", "/api/v1/publish", token: token, body: #"{"order":"7201","line":"taxi","state":"created"}"#,
            headers: [("Content-Type", "text/plain")]
        )
        #expect(wrongType.status == 415 && wrongType.json?["field"]?.stringValue == "Content-Type", "\(wrongType.text)")
        let big = #"{"order":"7201","line":"taxi","state":"created","cancellation_reason":""# + String(repeating: "x", count: 2_000) + #""}"#
        let tooBig = try Self.call(gateway, "POST", "/api/v1/publish", token: token, body: big)
        #expect(tooBig.status == 413, "\(tooBig.text)")
        let four = (0..<4).map { #"{"order":"720\#($0)","line":"taxi","state":"created"}"# }.joined(separator: ",")
        let overBatch = try Self.call(gateway, "POST", "/api/v1/publish/batch", token: token, body: #"{"changes":["# + four + "]}")
        #expect(overBatch.status == 413 && overBatch.json?["field"]?.stringValue == "changes", "\(overBatch.text)")
        let badItem = try Self.call(
            gateway, "POST", "/api/v1/publish/batch", token: token,
            body: #"{"changes":[{"order":"7201","line":"taxi","state":"created"},{"order":"7202","line":"taxi","state":"created","eta_seconds":true}]}"#
        )
        #expect(badItem.status == 422 && badItem.json?["field"]?.stringValue == "changes[1].eta_seconds", "\(badItem.text)")
        let unknownBatchField = try Self.call(gateway, "POST", "/api/v1/publish/batch", token: token, body: #"{"changes":[],"atomic":true}"#)
        #expect(unknownBatchField.status == 422 && unknownBatchField.json?["field"]?.stringValue == "atomic", "\(unknownBatchField.text)")

        // A slow body: the head promises 100 bytes, 10 arrive, then nothing: 408 after --api-body-timeout.
        let slow = try HTTPTestClient(port: gateway.apiPort)
        try slow.send(
            "POST /api/v1/publish HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\nContent-Type: application/json\r\n"
                + "Content-Length: 100\r\n\r\n{\"order\":"
        )
        let timedOut = try #require(slow.readResponse(seconds: 5), "no answer to a slow body")
        #expect(timedOut.status == 408, "\(timedOut.status) \(timedOut.text)")

        let admin = try gateway.token("--sub ops --role admin")
        for order in 7200...7203 {
            let read = try Self.call(gateway, "GET", "/api/v1/orders/taxi/\(order)", token: admin)
            #expect(read.status == 404, "order \(order) must not be stored: \(read.text)")
        }
    }

    @Test("a batch is applied in order, one result per change; a refused change does not undo the others")
    func batchOrderingAndPartialFailure() throws {
        let gateway = try MakeRunGateway()
        let token = try gateway.token("--sub backend-1 --role publisher --routes 'order://taxi/*'")
        let body = #"{"changes":[{"order":"7301","line":"taxi","state":"created"},"#
            + #"{"order":"7301","line":"taxi","state":"dispatching"},"#
            + #"{"order":"7301","line":"taxi","state":"paid"},"#
            + #"{"order":"7302","line":"taxi","state":"created"},"#
            + #"{"order":"7301","line":"taxi","state":"driver_assigned","driver_id":"d-9","eta_seconds":120}]}"#
        let result = try Self.call(gateway, "POST", "/api/v1/publish/batch", token: token, body: body)
        #expect(result.status == 200, "\(result.text)")
        let items = try #require(result.json?["results"]?.arrayValue)
        #expect(items.map { $0["status"]?.intValue ?? 0 } == [200, 200, 409, 200, 200], "\(result.text)")
        #expect(items.map { $0["index"]?.intValue ?? -1 } == [0, 1, 2, 3, 4])
        #expect(items.map { $0["offset"]?.intValue ?? 0 } == [1, 2, 0, 1, 3], "\(result.text)")
        #expect(result.json?["applied"]?.intValue == 4 && result.json?["refused"]?.intValue == 1)
        let read = try Self.call(gateway, "GET", "/api/v1/orders/taxi/7301", token: token)
        let states = read.json?["history"]?.arrayValue?.compactMap { $0["to"]?.stringValue }
        #expect(states == ["created", "dispatching", "driver_assigned"], "\(read.text)")
        #expect(read.json?["snapshot"]?["driver_id"]?.stringValue == "d-9")
    }

    @Test("idempotency keys: the same key again returns the first result, deduplicated, and stores nothing new")
    func idempotencyKeys() throws {
        let gateway = try MakeRunGateway()
        let token = try gateway.token("--sub backend-1 --role publisher --routes 'order://taxi/*'")
        let body = #"{"order":"7401","line":"taxi","state":"created","idempotency_key":"k-1"}"#
        let first = try Self.call(gateway, "POST", "/api/v1/publish", token: token, body: body)
        let again = try Self.call(gateway, "POST", "/api/v1/publish", token: token, body: body)
        #expect(first.status == 200 && again.status == 200, "\(first.text) \(again.text)")
        #expect(first.json?["deduplicated"]?.boolValue == false && again.json?["deduplicated"]?.boolValue == true)
        #expect(first.json?["offset"] == again.json?["offset"])
        let next = #"{"order":"7401","line":"taxi","state":"dispatching"}"#
        let headerKey: [(String, String)] = [("Content-Type", "application/json"), ("Idempotency-Key", "k-2")]
        let viaHeader = try Self.call(gateway, "POST", "/api/v1/publish", token: token, body: next, headers: headerKey)
        let viaHeaderAgain = try Self.call(gateway, "POST", "/api/v1/publish", token: token, body: next, headers: headerKey)
        #expect(viaHeader.json?["offset"]?.intValue == 2 && viaHeaderAgain.json?["deduplicated"]?.boolValue == true, "\(viaHeaderAgain.text)")
        let read = try Self.call(gateway, "GET", "/api/v1/orders/taxi/7401", token: token)
        #expect(read.json?["history"]?.arrayValue?.count == 2, "\(read.text)")
    }

    @Test("keep-alive: many publishes on one connection, each answered in order")
    func keepAlive() throws {
        let gateway = try MakeRunGateway()
        let token = try gateway.token("--sub backend-1 --role publisher --routes 'order://taxi/*'")
        let client = try HTTPTestClient(port: gateway.apiPort)
        for order in 0..<50 {
            try client.request(
                "POST", "/api/v1/publish", headers: [("Authorization", "Bearer \(token)"), ("Content-Type", "application/json")],
                body: #"{"order":"k\#(order)","line":"taxi","state":"created"}"#
            )
            let response = try #require(client.readResponse(), "no answer to publish \(order)")
            #expect(response.status == 200 && response.text.contains("order://taxi/k\(order)\""), "\(response.text)")
        }
        #expect(!client.closed)
    }
}
