import Foundation

/// `inspect tap`: follows `GET /admin/tap` and prints each matching record as it is stored.
public struct TapSession: Sendable {
    /// The admin listener.
    public var client: AdminHTTPClient
    /// Route pattern filter (`order://taxi/*`), passed to the server.
    public var route: String?
    /// Business line filter.
    public var line: String?
    /// Target state filter.
    public var state: String?

    /// Creates a session.
    public init(client: AdminHTTPClient, route: String? = nil, line: String? = nil, state: String? = nil) {
        self.client = client
        self.route = route
        self.line = line
        self.state = state
    }

    /// The request path with the filters as query parameters.
    public var path: String {
        let query = [("route", route), ("line", line), ("state", state)].compactMap { name, value in
            value.map { "\(name)=\(AdminHTTPClient.queryEscape($0))" }
        }
        return "/admin/tap" + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
    }

    /// Follows the stream until `limit` records, `deadline`, or the server closes; returns the records printed.
    /// `out` gets record lines, `note` the `--stats` lines and unreadable events.
    public func run(
        colour: Bool,
        stats: Bool,
        limit: Int?,
        deadline: ContinuousClock.Instant?,
        out: (String) -> Void,
        note: (String) -> Void
    ) throws(AdminError) -> Int {
        var parser = SSEParser()
        var counter = TapStats()
        var printed = 0
        func keepGoing() -> Bool {
            if stats, let line = counter.tick() { note(line) }
            if let limit, printed >= limit { return false }
            if let deadline, ContinuousClock.now >= deadline { return false }
            return true
        }
        try client.stream(path, accept: "text/event-stream", pollMillis: 200) { bytes in
            for event in parser.feed(bytes) where event.name == "message" || event.name == "record" {
                do throws(AdminError) {
                    let record = try TapRecord(json: event.data)
                    out(record.line(colour: colour))
                    counter.record(record)
                    printed += 1
                } catch {
                    note("tap: \(error)")
                }
                if let limit, printed >= limit { return false }
            }
            return keepGoing()
        } idle: {
            keepGoing()
        }
        return printed
    }
}

/// Runs blocking work (socket reads) on its own thread, so it does not hold a Swift concurrency thread.
public enum BlockingWork {
    /// Runs `body` on a new thread and returns its result.
    public static func run<T: Sendable>(_ body: @escaping @Sendable () throws(AdminError) -> T) async throws(AdminError) -> T {
        let result: Result<T, AdminError> = await withCheckedContinuation { continuation in
            let thread = Thread {
                do throws(AdminError) {
                    continuation.resume(returning: .success(try body()))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
            thread.name = "longlink-inspect"
            thread.start()
        }
        return try result.get()
    }
}
