import Foundation
import LonglinkClient

/// A rider's app following one order over TLS: it trusts a private CA (and optionally pins the gateway's public
/// key), gets its tokens from a token provider, prints every connection state, and sees each change of the order
/// through the three observer styles (a delegate, a closure, an AsyncSequence). Stops after `--changes` changes or
/// `--duration`; exits 0 when it got what it was asked for, 1 when the client stopped or the time ran out first,
/// 2 for a bad command line.
@main
struct RiderApp {
    static func main() async {
        let options: Options
        do {
            options = try Options(CommandLine.arguments.dropFirst())
        } catch {
            Console.error("\(error)\n\(Options.usage)")
            exit(2)
        }
        do {
            exit(try await follow(options))
        } catch {
            Console.error("\(error)")
            exit(1)
        }
    }

    /// Why the app stops.
    enum Outcome: Sendable {
        case enoughChanges(Int)
        case durationOver
        case clientStopped(ConnectionFailure)
        case subscriptionRefused(String)
    }

    /// Connects, follows `options.route` until an outcome, closes; the exit status.
    static func follow(_ options: Options) async throws -> Int32 {
        let tokens = TokenFile(path: options.tokenFile)
        let client = try LonglinkClient(
            configuration: ClientConfiguration(
                host: options.host,
                port: options.port,
                tokenProvider: { request in try tokens.token(for: request) },
                clientName: "rider-app",
                clientVersion: "1.0.0",
                tls: ClientTLS(trust: .caFile(options.caFile), pinnedPublicKeys: options.pins),
                serverName: options.serverName
            )
        )
        let (outcomes, outcome) = AsyncStream.makeStream(of: Outcome.self)

        // Connection states, as the app would show them (a banner while not connected).
        let states = client.stateChanges()
        let stateWatcher = Task {
            for await state in states {
                Console.line("state: \(state)")
                if case .stopped(let reason?) = state { outcome.yield(.clientStopped(reason)) }
            }
        }
        client.onSubscribed { route, recovered in
            Console.line("subscribed: \(route)" + (recovered ? " (resumed, nothing missed)" : ""))
        }
        client.onSubscriptionRefused { route, error in
            Console.line("refused: \(route): \(error)")
            outcome.yield(.subscriptionRefused("\(error)"))
        }

        // The three observer styles, all on the same order; each sees the snapshot (if any) and every change once.
        let screen = RideScreen()
        let delegateToken = client.observe(options.route, delegate: screen)
        let closureToken = client.observe(options.route) { change in Console.line("closure: \(change)") }
        let changes = client.changes(of: options.route)
        let streamReader = Task {
            var seen = 0
            for await change in changes {
                Console.line("stream: \(change)")
                guard change.kind == .change else { continue }
                seen += 1
                if seen == options.changes { outcome.yield(.enoughChanges(seen)) }
            }
        }
        let timer = Task {
            try? await Task.sleep(for: options.duration)
            outcome.yield(.durationOver)
        }

        var first: Outcome = .durationOver
        for await next in outcomes {
            first = next
            break
        }
        timer.cancel()
        client.waitForObservers()  // the delegate and the closure have seen what the stream saw
        delegateToken.cancel()
        closureToken.cancel()
        streamReader.cancel()
        withExtendedLifetime(screen) {}
        client.close()
        await stateWatcher.value

        switch first {
        case .enoughChanges(let count):
            Console.line("done: \(count) changes of \(options.route)")
            return 0
        case .durationOver:
            Console.line("done: \(DurationText(options.duration)) over")
            return options.changes == nil ? 0 : 1
        case .clientStopped(let reason):
            Console.line("done: the client stopped: \(reason)")
            return 1
        case .subscriptionRefused(let reason):
            Console.line("done: the gateway refused the subscription: \(reason)")
            return 1
        }
    }
}

/// `1.5 s` for a duration.
struct DurationText: CustomStringConvertible {
    var duration: Duration
    init(_ duration: Duration) { self.duration = duration }
    var description: String {
        let millis = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        return millis % 1000 == 0 ? "\(millis / 1000) s" : "\(Double(millis) / 1000) s"
    }
}
