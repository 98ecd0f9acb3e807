import LonglinkCore
import LonglinkLoop

/// A connection that only connects (and handshakes: TCP, TLS with `--tls`, Longlink `connect` → `connected`), for
/// the connect scenario. Loop-confined.
final class ConnectProbe: BenchConnectionDelegate, BenchSubscriber {
    private var connection: BenchConnection?
    private let counters: BenchCounters
    private let recorder: LoopRecorder
    private let settled: () -> Void
    private var closing = false

    init(index: Int, endpoint: BenchEndpoint, context: LoopContext, counters: BenchCounters, settled: @escaping () -> Void) {
        self.counters = counters
        self.recorder = context.attachment(LoopRecorder.self)!
        self.settled = settled
        do {
            connection = try BenchConnection(
                index: index,
                endpoint: endpoint,
                connectFrame: LonglinkFrames.connect,
                context: context,
                delegate: self
            )
        } catch {
            counters.fail(BenchConnection.reason(error, during: "connect"))
        }
    }

    var failedToStart: Bool { connection == nil && !closing }

    func close() {
        closing = true
        connection?.close()
        connection = nil
    }

    func connectionDidConnect(_ connection: BenchConnection) {
        counters.connected.add(1)
        counters.countTLSHandshake(of: connection)
        recorder.connect.record(MonotonicClock.nanoseconds() &- connection.startedAt)
        settled()
    }

    func connection(_ connection: BenchConnection, didReceive frame: ServerFrame) {}

    func connectionDidClose(_ connection: BenchConnection, error: String?) {
        guard !closing else { return }
        self.connection = nil
        counters.fail(error ?? "closed")
        settled()
    }
}

@available(*, unavailable)
extension ConnectProbe: Sendable {}
