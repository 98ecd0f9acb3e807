// longlink-sqlite-crash-writer: a helper for LonglinkSQLiteTests' crash-durability test (not shipped).
//
// Usage: longlink-sqlite-crash-writer <database path> [batch size] [max changes] [max seconds]
//
// Opens (or creates) the SQLite store and applies a deterministic stream of taxi changes in group-commit batches.
// After each batch commits, it writes one line per ACKNOWLEDGED change to stdout, `<order> <offset> <state>`,
// with a single write(2) per batch (no stdio buffering), so every line the parent reads is a change the store
// reported stored. The parent kills it with SIGKILL mid-stream and checks every acknowledged line survived.
import Glibc
import LonglinkCore
import LonglinkSQLite

/// Writes all of `text` to `fd`, retrying short writes and EINTR; exits when the reader went away.
func writeAll(_ text: String, to fd: Int32) {
    var text = text
    text.withUTF8 { bytes in
        var offset = 0
        while offset < bytes.count {
            let n = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                exit(3)
            }
            offset += n
        }
    }
}

/// Reports a failure on stderr and exits with `status`.
func fail(_ message: String, status: Int32 = 1) -> Never {
    writeAll("crash-writer: \(message)\n", to: 2)
    exit(status)
}

let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
    fail("usage: longlink-sqlite-crash-writer <database path> [batch size] [max changes] [max seconds]", status: 2)
}
let path = arguments[1]
let batchSize = arguments.count > 2 ? Int(arguments[2]) ?? 200 : 200
let maxChanges = arguments.count > 3 ? Int(arguments[3]) ?? 1_000_000 : 1_000_000
let maxSeconds = arguments.count > 4 ? UInt64(arguments[4]) ?? 30 : 30

/// The n-th change of the stream: groups of 16 orders, each walked through the 8-step taxi lifecycle, steps
/// interleaved across the group so every batch mixes creations and updates of different orders.
func change(_ n: Int) -> OrderChange {
    let steps: [(OrderState, OrderFields)] = [
        (BuiltInLines.created, OrderFields(location: GeoPoint(latitudeE6: 31_230_416, longitudeE6: 121_473_701))),
        (BuiltInLines.dispatching, .none),
        (BuiltInLines.driverAssigned, OrderFields(driverID: "driver-\(n % 97)", etaSeconds: 240)),
        (BuiltInLines.driverArriving, OrderFields(etaSeconds: 120)),
        (BuiltInLines.driverArrived, OrderFields(etaSeconds: 0)),
        (BuiltInLines.inTrip, OrderFields(payload: [UInt8](repeating: UInt8(n % 251), count: 64))),
        (BuiltInLines.completed, .none),
        (BuiltInLines.paid, .none),
    ]
    let group = n / (16 * steps.count)
    let within = n % (16 * steps.count)
    let order = group * 16 + within % 16
    let (state, fields) = steps[within / 16]
    return OrderChange(
        orderID: OrderID("crash-\(order)")!,
        line: .taxi,
        targetState: state,
        fields: fields,
        idempotencyKey: "k\(n)"
    )
}

let store: SQLiteOrderStore
do {
    store = try SQLiteOrderStore(path: path)
} catch {
    fail("\(error)")
}
let deadline = MonotonicClock.nanoseconds() + maxSeconds * 1_000_000_000
var next = 0
while next < maxChanges && MonotonicClock.nanoseconds() < deadline {
    let batch = (next..<min(maxChanges, next + batchSize)).map(change)
    let results = store.applyBatch(batch)
    var lines = ""
    for (change, result) in zip(batch, results) {
        switch result {
        case .success(let applied):
            lines += "\(change.orderID) \(applied.record.position.offset) \(applied.record.toState)\n"
        case .failure(let error):
            fail("change \(change.orderID) → \(change.targetState) failed: \(error)")
        }
    }
    writeAll(lines, to: 1)
    next += batch.count
}
store.shutdown()
