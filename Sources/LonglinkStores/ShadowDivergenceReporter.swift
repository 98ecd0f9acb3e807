public import LonglinkCore
import Synchronization

/// One difference between the primary and the shadow store seen by `ShadowOrderStore` (or `ShadowToggleStore`).
public struct ShadowDivergence: Hashable, Sendable, CustomStringConvertible {
    /// What kind of difference.
    public enum Kind: String, Hashable, Sendable {
        /// Both succeeded with different records or snapshots.
        case resultDiffers = "result_differs"
        /// Both refused, with different errors.
        case errorDiffers = "error_differs"
        /// The primary succeeded and the shadow refused or failed.
        case shadowFailed = "shadow_failed"
        /// The primary refused or failed and the shadow succeeded.
        case primaryFailed = "primary_failed"
        /// A read (snapshot or history) answered differently.
        case readDiffers = "read_differs"
        /// Expiry removed a different number of orders.
        case expiryDiffers = "expiry_differs"
    }

    /// The operation (`apply`, `applyCommitted`, `snapshot`, `records`, `importOrder`, `expire`; and
    /// `ShadowToggleStore`'s `setToggle`, `toggles`, `importToggle`).
    public var operation: String
    /// The kind of difference.
    public var kind: Kind
    /// The order's line (nil for store-wide operations).
    public var line: BusinessLine?
    /// The order (nil for store-wide operations).
    public var orderID: OrderID?
    /// What differed, for the log.
    public var detail: String

    public init(operation: String, kind: Kind, line: BusinessLine?, orderID: OrderID?, detail: String) {
        self.operation = operation
        self.kind = kind
        self.line = line
        self.orderID = orderID
        self.detail = detail
    }

    public var description: String {
        let order = orderID.map { " order \(line.map { "\($0)/" } ?? "")\($0)" } ?? ""
        return "shadow divergence (\(kind.rawValue)) in \(operation)\(order): \(detail)"
    }
}

/// Counts and logs the differences `ShadowOrderStore` finds; tests and metrics read the counts.
public final class ShadowDivergenceReporter: Sendable {
    private struct State {
        var total = 0
        var byKind: [ShadowDivergence.Kind: Int] = [:]
        var byOrder: [OrderID: Int] = [:]
        var recent: [ShadowDivergence] = []
    }

    private let logger: Logger
    private let keepRecent: Int
    private let state = Mutex(State())

    /// A reporter logging each divergence at `warning` and keeping the latest `keepRecent`.
    public init(logger: Logger = .disabled, keepRecent: Int = 100) {
        self.logger = logger
        self.keepRecent = max(0, keepRecent)
    }

    /// Records one divergence.
    public func report(_ divergence: ShadowDivergence) {
        logger.warning(
            divergence.description,
            [("operation", divergence.operation), ("order", divergence.orderID?.rawValue ?? "-")]
        )
        state.withLock { state in
            state.total += 1
            state.byKind[divergence.kind, default: 0] += 1
            if let order = divergence.orderID { state.byOrder[order, default: 0] += 1 }
            state.recent.append(divergence)
            if state.recent.count > keepRecent { state.recent.removeFirst(state.recent.count - keepRecent) }
        }
    }

    /// Every divergence so far.
    public var count: Int { state.withLock { $0.total } }

    /// Divergences of one kind.
    public func count(of kind: ShadowDivergence.Kind) -> Int { state.withLock { $0.byKind[kind] ?? 0 } }

    /// Divergences concerning one order.
    public func count(for order: OrderID) -> Int { state.withLock { $0.byOrder[order] ?? 0 } }

    /// The latest divergences, oldest first.
    public var recent: [ShadowDivergence] { state.withLock { $0.recent } }
}
