import LonglinkClient
import LonglinkCore

/// `longlink orders show ID [--line LINE]`: an order's current snapshot and its retained history, read from a
/// running gateway.
public enum OrdersCommand {
    /// The command.
    public static let command = Command(
        name: "orders",
        summary: "show an order's snapshot and history",
        usage: "show ID [--line LINE] [--json]",
        details: ClientExitCode.help,
        maximumPositionals: 2,
        options: ClientOptions.specs + [
            OptionSpec("line", default: "taxi", valueName: "LINE", help: "business line", configurable: false),
            OptionSpec("json", kind: .flag, help: "print JSON lines"),
        ]
    ) { options, context in
        guard options.positionals.first == "show", options.positionals.count == 2 else {
            throw CommandLineError("usage: longlink orders show ID [--line LINE]")
        }
        let idText = options.positionals[1]
        guard let id = OrderID(idText) else { throw CommandLineError("'\(idText)' is not a valid order id") }
        let lineText = try options.required("line")
        guard let line = BusinessLine(lineText) else { throw CommandLineError("'\(lineText)' is not a valid line name") }
        let route = Route.order(line, id)
        let client = try ClientOptions.makeClient(options, name: "orders")
        defer { client.close() }
        try await ClientOptions.connect(client, options)
        let reply: Subscribed
        do throws(ClientError) {
            reply = try await client.history(of: route)
        } catch {
            throw ClientOptions.failure(error, options)
        }
        guard let snapshot = reply.snapshot else {
            context.io.err("\(route): no such order")
            return 1
        }
        let json = options.flag("json")
        let current = ContentChange(snapshot: snapshot, kind: .snapshot)
        context.io.out(json ? ChangeFormatter.json(current) : ChangeFormatter.line(current))
        var state: OrderSnapshot?
        for record in reply.missed {
            state = state?.applying(record) ?? OrderSnapshot(first: record)
            let change = ContentChange(route: route, record: record, snapshot: state!)
            context.io.out(json ? ChangeFormatter.json(change) : "  " + ChangeFormatter.line(change))
        }
        if !reply.recovered {
            context.io.err("(history longer than one reply or expired; showing the snapshot only)")
        }
        return 0
    }
}
