import Glibc
import LonglinkClient
import LonglinkCore
import LonglinkLoop
import LonglinkTestSupport
import Testing

/// What `print(value)` shows for the public types an app prints: the content, never the storage boxes inside.
@Suite("readable descriptions of changes, records, snapshots, positions, toggles, errors and states", .ownThreads)
struct ReadableValuesTests {
    let record = OrderChangeRecord(
        orderID: OrderID("8812")!,
        line: .taxi,
        fromState: "dispatching",
        toState: "driver_assigned",
        fields: OrderFields(driverID: "d-7", etaSeconds: 240),
        position: StreamPosition(epoch: 7, offset: 3),
        timestampMillis: 1_732_904_800_123,
        idempotencyKey: "k-1"
    )

    /// No internal type names (`ValueBox<…>`, `OrderCell`, module prefixes) in a description.
    func expectReadable(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        for name in ["ValueBox", "OrderCell", "Storage", "LonglinkCore.", "LonglinkClient.", "cell:", "box:"] {
            #expect(!text.contains(name), "\(name) in: \(text)", sourceLocation: sourceLocation)
        }
    }

    @Test("a record, a snapshot and a change print the route, position, transition and fields")
    func orderValues() {
        #expect("\(record)" == "order://taxi/8812 7:3 dispatching → driver_assigned driver=d-7 eta=240s at 2024-11-29T18:26:40.123Z")
        let snapshot = OrderSnapshot(first: record)
        #expect("\(snapshot)" == "order://taxi/8812 7:3 driver_assigned driver=d-7 eta=240s (updated 2024-11-29T18:26:40.123Z)")
        let change = ContentChange(route: record.route, record: record, snapshot: snapshot)
        #expect("\(change)" == "change order://taxi/8812 7:3 dispatching → driver_assigned driver=d-7 eta=240s")
        #expect("\(ContentChange(snapshot: snapshot, kind: .snapshot))" == "snapshot order://taxi/8812 7:3 driver_assigned driver=d-7 eta=240s")
        #expect(String(describing: StreamPosition(epoch: 7, offset: 3)) == "7:3")
        let request = OrderChange(orderID: OrderID("8812")!, line: .taxi, targetState: "created", idempotencyKey: "k-1")
        #expect("\(request)" == "order://taxi/8812 → created (key k-1)")
        #expect(String(reflecting: record).hasPrefix("OrderChangeRecord(route: order://taxi/8812, position: 7:3, from: dispatching"))
        #expect(String(reflecting: record).contains("idempotencyKey: \"k-1\""))
        for text in [
            "\(record)", "\(snapshot)", "\(change)", "\(request)", String(reflecting: record), String(reflecting: snapshot),
            String(reflecting: change), String(reflecting: request), "\(OrderFields())",
        ] {
            expectReadable(text)
        }
    }

    @Test("a toggle prints its route, value and position")
    func toggle() throws {
        let toggle = try #require(FeatureToggle(app: "rider", name: "new_home", value: .rollout(percent: 25), position: StreamPosition(epoch: 1, offset: 2)))
        #expect("\(toggle)" == "config://rider/new_home = 25% (1:2)")
        expectReadable(String(reflecting: toggle))
    }

    @Test("errors and connection states print what happened")
    func errorsAndStates() {
        let refused = ConnectionFailure.connectionRefused(host: "127.0.0.1", port: 7070)
        #expect("\(refused)" == "connection refused by 127.0.0.1:7070 (is the gateway running there?)")
        #expect("\(ClientError.connectionFailed(refused))" == "\(refused)")
        #expect("\(ConnectionFailure.authentication(.tokenExpired))" == "token expired; connect with a fresh token")
        #expect("\(ConnectionFailure.tls(TLSFailure(cause: .certificateExpired, detail: "x")))" == "TLS: certificate verify failed: certificate has expired")
        let waiting = ConnectionState.waitingToRetry(attempt: 2, delay: .milliseconds(250), reason: refused)
        #expect("\(waiting)" == "retrying in 250 ms (attempt 3) after: connection refused by 127.0.0.1:7070 (is the gateway running there?)")
        #expect("\(ConnectionState.stopped(.serverShuttingDown(reconnectAfter: .milliseconds(1_500))))" == "stopped: the gateway is shutting down; come back in 1.5 s")
        let frame = ErrorFrame(requestID: 3, code: .unknownState, message: "'x' is not a state of line taxi")
        #expect("\(ClientError.refused(frame))" == "refused: unknown_state(408): 'x' is not a state of line taxi")
        #expect("\(StoreError.unknownLine("bus"))" == "unknown business line 'bus'")
        #expect(String(reflecting: StoreError.unknownLine("bus")) == "StoreError(unknown_line(405)): unknown business line 'bus'")
        #expect(refused.isTerminal == false)
        #expect(ConnectionFailure.authentication(.invalidToken("bad")).isTerminal)
    }

    @Test("timestamps print as ISO 8601 UTC, the same as gmtime, across leap days and centuries")
    func timestamps() {
        for seconds: Int in [0, 951_782_400, 1_709_164_800, 1_732_904_800, 4_107_542_399, 4_107_542_400, 253_402_300_799] {
            var time = time_t(seconds)
            var parts = tm()
            gmtime_r(&time, &parts)
            func pad(_ value: Int32, _ width: Int) -> String {
                String(repeating: "0", count: max(0, width - String(value).count)) + String(value)
            }
            let date = pad(parts.tm_year + 1900, 4) + "-" + pad(parts.tm_mon + 1, 2) + "-" + pad(parts.tm_mday, 2)
            let clock = pad(parts.tm_hour, 2) + ":" + pad(parts.tm_min, 2) + ":" + pad(parts.tm_sec, 2)
            let expected = date + "T" + clock + ".042Z"
            #expect(TimestampText.iso8601(millis: UInt64(seconds) * 1000 + 42) == expected)
        }
    }
}
