import LonglinkClient
import LonglinkCore

/// `longlink subscribe ROUTE...`: prints every change on the routes, one line each (or JSON lines), and keeps
/// going across reconnects until Ctrl-C, `--count` changes or `--duration`. A connection that cannot be made, a
/// refused subscribe (a route the token does not cover, an unknown line) and a stop for good (token expired) end it
/// at once with `ClientExitCode`'s code.
public enum SubscribeCommand {
    /// The command.
    public static let command = Command(
        name: "subscribe",
        summary: "print every change on one or more routes, reconnecting by itself",
        usage: "ROUTE... [--json] [--count N] [--duration D]   (ROUTE: order://taxi/8812, or order://taxi/* for the whole line)",
        details: ClientExitCode.help,
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
        let (failures, failed) = AsyncStream.makeStream(of: CommandFailure.self, bufferingPolicy: .bufferingOldest(1))
        // Refused subscribes come here (and to onError, which prints only connection-level errors).
        client.onSubscriptionRefused { route, error in
            failed.yield(CommandFailure("cannot subscribe to \(route): \(error)", exitCode: ClientExitCode.refused))
        }
        // Say on stderr when each subscription is active (after every connect), so a console or a script knows
        // from when on changes reach it: a line-wide subscription is live-only.
        client.onSubscribed { route, recovered in
            let how = route.isLineWide ? " (live only)" : recovered ? " (resumed, nothing missed)" : ""
            context.io.err("longlink subscribe: subscribed to \(route)\(how)")
        }
        client.onError { error in
            if error.requestID == 0 { context.io.err("server error: \(error)") }
        }
        let streams = routes.map { client.changes(of: $0) }
        try await ClientOptions.connect(client, options)
        let states = client.stateChanges()
        let outcome = await withTaskGroup(of: CommandFailure?.self) { group -> CommandFailure? in
            let counter = PrintCounter(limit: limit)
            for stream in streams {
                group.addTask {
                    for await change in stream {
                        guard counter.claim() else { return nil }
                        context.io.out(json ? ChangeFormatter.json(change) : ChangeFormatter.line(change))
                        if counter.isDone { return nil }
                    }
                    return nil
                }
            }
            group.addTask {
                for await failure in failures { return failure }
                return nil
            }
            group.addTask {
                // After the first connection the client reconnects by itself; say so, and end on a stop for good.
                for await state in states {
                    switch state {
                    case .waitingToRetry:
                        context.io.err("longlink subscribe: \(state)")
                    case .stopped(let reason?):
                        return ClientOptions.failure(.connectionFailed(reason), options)
                    default:
                        continue
                    }
                }
                return nil
            }
            group.addTask {
                if let duration {
                    try? await Task.sleep(for: duration)
                } else {
                    while !counter.isDone { try? await Task.sleep(for: .milliseconds(50)) }
                }
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            if first == nil, let limit, counter.count < limit {
                return CommandFailure("only \(counter.count) of \(limit) changes arrived", exitCode: 1)
            }
            return first
        }
        if let outcome { throw outcome }
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
