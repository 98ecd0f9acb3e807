import LonglinkClient
import LonglinkCore

/// `longlink subscribe ROUTE...`: prints every change on the routes, one line each (or JSON lines), and keeps
/// going across reconnects until Ctrl-C, `--count` changes or `--duration`.
public enum SubscribeCommand {
    /// The command.
    public static let command = Command(
        name: "subscribe",
        summary: "print every change on one or more routes, reconnecting by itself",
        usage: "ROUTE... [--json] [--count N] [--duration D]   (ROUTE: order://taxi/8812, or order://taxi/* for the whole line)",
        options: ClientOptions.specs + [
            OptionSpec("json", kind: .flag, help: "print JSON lines"),
            OptionSpec("count", valueName: "N", help: "exit after N changes (snapshots included)", configurable: false),
            OptionSpec("duration", valueName: "DURATION", help: "exit after this long", configurable: false),
        ]
    ) { options, context in
        guard !options.positionals.isEmpty else { throw CommandLineError("give at least one route, e.g. order://taxi/8812") }
        var routes: [Route] = []
        for text in options.positionals {
            do {
                routes.append(try RouteRegistry.standard.subscriptionRoute(parsing: text))  // also `order://taxi/*`
            } catch {
                throw CommandLineError("\(error)")
            }
        }
        let limit = try options.int("count")
        let duration = try options.duration("duration")
        let json = options.flag("json")
        let client = try ClientOptions.makeClient(options, name: "subscribe", io: context.io)
        defer { client.close() }
        client.onError { error in context.io.err("server error: \(error)") }
        let streams = routes.map { client.changes(of: $0) }
        try await ClientOptions.connect(client, options)
        let printed = await withTaskGroup(of: Int.self) { group -> Int in
            let counter = PrintCounter(limit: limit)
            for stream in streams {
                group.addTask {
                    for await change in stream {
                        guard counter.claim() else { return 0 }
                        context.io.out(json ? ChangeFormatter.json(change) : ChangeFormatter.line(change))
                        if counter.isDone { return 0 }
                    }
                    return 0
                }
            }
            group.addTask {
                if let duration {
                    try? await Task.sleep(for: duration)
                } else {
                    while !counter.isDone { try? await Task.sleep(for: .milliseconds(50)) }
                }
                return 0
            }
            _ = await group.next()
            group.cancelAll()
            return counter.count
        }
        if let limit, printed < limit { return 1 }
        return 0
    }
}

import Synchronization

/// Counts printed lines across tasks and says when the limit is reached.
final class PrintCounter: Sendable {
    private let state = Mutex(0)
    let limit: Int?

    init(limit: Int?) { self.limit = limit }

    /// Reserves one line; false when the limit was reached.
    func claim() -> Bool {
        state.withLock {
            if let limit, $0 >= limit { return false }
            $0 += 1
            return true
        }
    }

    var count: Int { state.withLock { $0 } }
    var isDone: Bool { limit.map { count >= $0 } ?? false }
}
