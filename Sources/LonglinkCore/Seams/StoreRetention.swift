/// How much history a store keeps. Every `OrderStore` implementation honours these limits in `expire(nowMillis:)`
/// (and may trim history by count on `apply`).
public struct StoreRetention: Hashable, Sendable {
    /// Records kept per order; older ones are dropped (a client behind them gets `recovered = false`).
    public var maxRecordsPerOrder: Int
    /// Records older than this (ms) are dropped, except each order's latest record.
    public var maxHistoryAgeMillis: UInt64
    /// An order in a terminal state is removed entirely this long (ms) after its last change.
    public var terminalOrderTTLMillis: UInt64

    public init(
        maxRecordsPerOrder: Int = 1_000,
        maxHistoryAgeMillis: UInt64 = 24 * 3_600_000,
        terminalOrderTTLMillis: UInt64 = 24 * 3_600_000
    ) {
        self.maxRecordsPerOrder = maxRecordsPerOrder
        self.maxHistoryAgeMillis = maxHistoryAgeMillis
        self.terminalOrderTTLMillis = terminalOrderTTLMillis
    }

    /// The default: 1,000 records and 24 hours of history per order; terminal orders kept for 24 hours.
    public static let standard = StoreRetention()
}
