import Foundation
public import Testing

/// The tests' one polling helper: checks `condition` every `interval` until it holds or `timeout` passes, so a
/// bug fails the test instead of hanging it, and returns whether it held (the condition is checked once more at the
/// deadline).
///
/// Use it inside `#expect`/`#require`/`guard`, or on its own with `what`: then a timeout records an issue at the
/// caller saying what did not happen and for how long it was awaited (`"still false after 10 s: the subscriber
/// got 3 records"`), and the result may be ignored.
///
/// ```swift
/// #expect(eventually { received.count == 3 })
/// eventually("the subscriber got 3 records") { received.count == 3 }
/// ```
///
/// The blocking form sleeps the calling thread; in `async` code use the `async` form, which suspends instead and so
/// never holds one of the cooperative pool's few threads.
@discardableResult
public func eventually(
    _ what: Comment? = nil,
    timeout: Duration = .seconds(10),
    every interval: Duration = .milliseconds(5),
    fileID: String = #fileID,
    filePath: String = #filePath,
    line: Int = #line,
    column: Int = #column,
    _ condition: () throws -> Bool
) rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try condition() { return true }
        Thread.sleep(forTimeInterval: seconds(interval))
    }
    if try condition() { return true }
    recordTimeout(what, timeout, SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column))
    return false
}

/// `eventually` for `async` code: suspends between checks.
@discardableResult
public func eventually(
    _ what: Comment? = nil,
    timeout: Duration = .seconds(10),
    every interval: Duration = .milliseconds(10),
    fileID: String = #fileID,
    filePath: String = #filePath,
    line: Int = #line,
    column: Int = #column,
    _ condition: () throws -> Bool
) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try condition() { return true }
        try? await Task.sleep(for: interval)
    }
    if try condition() { return true }
    recordTimeout(what, timeout, SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column))
    return false
}

private func recordTimeout(_ what: Comment?, _ timeout: Duration, _ sourceLocation: SourceLocation) {
    guard let what else { return }
    Issue.record("still false after \(timeout): \(what)", sourceLocation: sourceLocation)
}

private func seconds(_ duration: Duration) -> Double {
    let (whole, attoseconds) = duration.components
    return Double(whole) + Double(attoseconds) / 1e18
}
