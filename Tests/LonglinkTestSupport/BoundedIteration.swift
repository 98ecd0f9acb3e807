/// Iterates an `AsyncStream` for at most `timeout`: a test that waits for elements must end by itself even when
/// the element it waits for never comes (an unbounded `for await` hangs the whole test process instead).
///
/// Calls `body` with each element until it returns `true` (done) or the time is up; returns whether `body`
/// finished the iteration.
public func iterate<Element: Sendable>(
    _ stream: AsyncStream<Element>,
    timeout: Duration = .seconds(30),
    _ body: @escaping @Sendable (Element) -> Bool
) async -> Bool {
    await withTaskGroup(of: Bool.self) { group in
        group.addTask {
            for await element in stream where body(element) { return true }
            return false
        }
        group.addTask {
            try? await Task.sleep(for: timeout)
            return false
        }
        let finished = await group.next() ?? false
        group.cancelAll()
        return finished
    }
}
