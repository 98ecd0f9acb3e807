import LonglinkClient
import LonglinkCore
import LonglinkJSON

/// `longlink presence ROUTE`: who is subscribed to a route now, over every node (the rider asking whether the
/// driver's app is online). Needs a token whose routes cover the route.
public enum PresenceCommand {
    /// The command.
    public static let command = Command(
        name: "presence",
        summary: "show who is subscribed to a route now (user, client, connection, since)",
        usage: "ROUTE [--json]",
        options: ClientOptions.specs + [OptionSpec("json", kind: .flag, help: "print one JSON object")]
    ) { options, context in
        guard options.positionals.count == 1 else { throw CommandLineError("usage: longlink presence ROUTE, e.g. order://taxi/8812") }
        let route: Route
        do {
            route = try RouteRegistry.standard.subscriptionRoute(parsing: options.positionals[0])
        } catch {
            throw CommandLineError("\(error)")
        }
        let client = try ClientOptions.makeClient(options, name: "presence")
        defer { client.close() }
        try await ClientOptions.connect(client, options)
        let reply: PresenceReply
        do throws(ClientError) {
            reply = try await client.presence(of: route)
        } catch {
            context.io.err("\(error)")
            return 1
        }
        if options.flag("json") {
            let members = reply.members.map { member in
                "{\"user\":\(quoted(member.userID)),\"client\":\(quoted(member.clientName)),\"connection\":\(quoted(member.connectionID)),"
                    + "\"since_ms\":\(member.sinceMillis),\"node\":\(quoted(member.nodeID))}"
            }
            context.io.out(
                "{\"route\":\(quoted(route.text)),\"count\":\(reply.count),\"users\":\(reply.users),"
                    + "\"counts_only\":\(reply.countsOnly),\"members\":[\(members.joined(separator: ","))]}"
            )
            return 0
        }
        context.io.out("\(route): \(reply.count) subscribed, \(reply.users) users\(reply.countsOnly ? " (counts only)" : "")")
        for member in reply.members {
            context.io.out("  \(member.userID)  client=\(member.clientName.isEmpty ? "-" : member.clientName)  conn=\(member.connectionID)  since_ms=\(member.sinceMillis)  node=\(member.nodeID)")
        }
        return 0
    }

    private static func quoted(_ text: String) -> String { JSONValue.quoted(text, htmlSafe: false) }
}
