public import LonglinkCore

/// The stage between the commit and the fan-out: the single writer hands it each batch's newly stored records (not
/// deduplicated ones) on the committing thread, right after the batch is durable and before the completions and
/// observers. In `longlink serve` it publishes to the broker (`BrokerPublisher`), or, when a Redis Cluster store
/// publishes each record itself, feeds the line channels; the broker then delivers to the gateway's loops. It must
/// never drop a record, must not block, and costs no thread hop.
public struct BrokerHandOff: Sendable {
    private let publish: @Sendable ([OrderChangeRecord]) -> Void

    /// A hand-off that calls `publish` with each committed batch.
    public init(_ publish: @escaping @Sendable ([OrderChangeRecord]) -> Void) {
        self.publish = publish
    }

    /// Hands one committed batch on (never empty).
    public func hand(_ records: [OrderChangeRecord]) {
        publish(records)
    }
}
