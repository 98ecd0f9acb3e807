public import LonglinkCore
public import LonglinkStores
import Glibc
import Synchronization

/// `count` legal taxi changes of one order, each with its own idempotency key (so retries are safe): created,
/// dispatching, then driver_assigned ⇄ dispatching.
public func keyedTaxiChanges(_ id: String, count: Int) -> [OrderChange] {
    let order = OrderID(id)!
    return (0..<count).map { index in
        let key = "\(id)-\(index)"
        switch index {
        case 0: return OrderChange(orderID: order, line: .taxi, targetState: "created", idempotencyKey: key)
        case _ where index % 2 == 1:
            return OrderChange(orderID: order, line: .taxi, targetState: "dispatching", idempotencyKey: key)
        default:
            return OrderChange(
                orderID: order,
                line: .taxi,
                targetState: "driver_assigned",
                fields: OrderFields(driverID: "d-\(index)"),
                idempotencyKey: key
            )
        }
    }
}

/// Applies a change through a node's Store writer and waits for the answer (bounded).
public func applyAndWait(_ writer: StoreWriter, _ change: OrderChange, timeout: Duration = .seconds(10)) -> Result<AppliedChange, StoreError> {
    let box = Mutex<Result<AppliedChange, StoreError>?>(nil)
    writer.apply(change) { result in box.withLock { $0 = result } }
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if let result = box.withLock({ $0 }) { return result }
        usleep(1_000)
    }
    return .failure(.storage("test: no answer within \(timeout)", retryable: true))
}
